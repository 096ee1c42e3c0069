package etcdapi

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/hybridkv/hybridkv/client"
)

// rangeOp translates a range request, refusing what hybridkv cannot
// answer: past revisions, revision filters and orders other than by key.
func rangeOp(r *pb.RangeRequest) (client.TxnOp, error) {
	switch {
	case r.Revision > 0:
		return client.TxnOp{}, unsupported("Range at a past revision: hybridkv keeps only each key's latest version")
	case r.MinModRevision > 0 || r.MaxModRevision > 0 || r.MinCreateRevision > 0 || r.MaxCreateRevision > 0:
		return client.TxnOp{}, unsupported("Range's revision filters are not supported")
	case r.SortOrder == pb.RangeRequest_DESCEND || r.SortOrder == pb.RangeRequest_ASCEND && r.SortTarget != pb.RangeRequest_KEY:
		return client.TxnOp{}, unsupported("Range sorts by key, ascending, only")
	}
	limit := uint64(0)
	if r.Limit > 0 {
		limit = uint64(r.Limit)
	}
	return client.TxnOp{Kind: client.Get, Key: string(r.Key), End: string(r.RangeEnd), Limit: limit,
		KeysOnly: r.KeysOnly, CountOnly: r.CountOnly}, nil
}

func putOp(r *pb.PutRequest) (client.TxnOp, error) {
	switch {
	case r.Lease != 0 || r.IgnoreLease:
		return client.TxnOp{}, unsupported("leases are not supported")
	case r.IgnoreValue:
		return client.TxnOp{}, unsupported("Put with ignore_value is not supported")
	}
	return client.TxnOp{Kind: client.Put, Key: string(r.Key), Value: r.Value, PrevKV: r.PrevKv}, nil
}

func deleteOp(r *pb.DeleteRangeRequest) client.TxnOp {
	return client.TxnOp{Kind: client.Delete, Key: string(r.Key), End: string(r.RangeEnd), PrevKV: r.PrevKv}
}

// transaction translates etcd's transaction.
func transaction(r *pb.TxnRequest) (*client.Txn, error) {
	t := &client.Txn{}
	for _, c := range r.Compare {
		cmp, err := compare(c)
		if err != nil {
			return nil, err
		}
		t.Compares = append(t.Compares, cmp)
	}
	var err error
	if t.Then, err = requestOps(r.Success); err != nil {
		return nil, err
	}
	if t.Else, err = requestOps(r.Failure); err != nil {
		return nil, err
	}
	return t, nil
}

func compare(c *pb.Compare) (client.Compare, error) {
	if len(c.RangeEnd) > 0 {
		return client.Compare{}, unsupported("a Txn compare over a range of keys is not supported")
	}
	out := client.Compare{Key: string(c.Key)}
	switch c.Result {
	case pb.Compare_EQUAL:
		out.Result = client.Equal
	case pb.Compare_NOT_EQUAL:
		out.Result = client.NotEqual
	case pb.Compare_LESS:
		out.Result = client.Less
	case pb.Compare_GREATER:
		out.Result = client.Greater
	default:
		return client.Compare{}, unsupported("unknown compare result")
	}
	switch c.Target {
	case pb.Compare_VALUE:
		out.Target, out.Value = client.CompareValue, c.GetValue()
	case pb.Compare_VERSION:
		out.Target, out.Number = client.CompareVersion, nonNegative(c.GetVersion())
	case pb.Compare_CREATE:
		out.Target, out.Number = client.CompareCreate, nonNegative(c.GetCreateRevision())
	case pb.Compare_MOD:
		out.Target, out.Number = client.CompareMod, nonNegative(c.GetModRevision())
	default:
		return client.Compare{}, unsupported("Txn compares on leases are not supported")
	}
	return out, nil
}

// nonNegative maps etcd's signed revisions onto hybridkv's: no key has a
// negative one, so comparing with 0 says the same of every key.
func nonNegative(v int64) uint64 { return uint64(max(v, 0)) }

func requestOps(reqs []*pb.RequestOp) ([]client.TxnOp, error) {
	var ops []client.TxnOp
	for _, r := range reqs {
		var op client.TxnOp
		var err error
		switch {
		case r.GetRequestRange() != nil:
			op, err = rangeOp(r.GetRequestRange())
		case r.GetRequestPut() != nil:
			op, err = putOp(r.GetRequestPut())
		case r.GetRequestDeleteRange() != nil:
			op = deleteOp(r.GetRequestDeleteRange())
		default:
			err = unsupported("nested Txn is not supported")
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func txnResponse(h *pb.ResponseHeader, t *client.Txn, tr *client.TxnResult) *pb.TxnResponse {
	ops := t.Else
	if tr.Succeeded {
		ops = t.Then
	}
	resp := &pb.TxnResponse{Header: h, Succeeded: tr.Succeeded}
	for i, op := range ops {
		res := &tr.Results[i]
		var ro *pb.ResponseOp
		switch op.Kind {
		case client.Get:
			ro = &pb.ResponseOp{Response: &pb.ResponseOp_ResponseRange{ResponseRange: rangeResponse(h, res)}}
		case client.Put:
			ro = &pb.ResponseOp{Response: &pb.ResponseOp_ResponsePut{ResponsePut: putResponse(h, res)}}
		default:
			ro = &pb.ResponseOp{Response: &pb.ResponseOp_ResponseDeleteRange{ResponseDeleteRange: deleteResponse(h, res)}}
		}
		resp.Responses = append(resp.Responses, ro)
	}
	return resp
}

func rangeResponse(h *pb.ResponseHeader, res *client.TxnOpResult) *pb.RangeResponse {
	return &pb.RangeResponse{Header: h, Kvs: keyValues(res.KVs), More: res.More, Count: int64(res.Count)}
}

func putResponse(h *pb.ResponseHeader, res *client.TxnOpResult) *pb.PutResponse {
	resp := &pb.PutResponse{Header: h}
	if kvs := keyValues(res.KVs); len(kvs) > 0 {
		resp.PrevKv = kvs[0]
	}
	return resp
}

func deleteResponse(h *pb.ResponseHeader, res *client.TxnOpResult) *pb.DeleteRangeResponse {
	return &pb.DeleteRangeResponse{Header: h, Deleted: int64(res.Deleted), PrevKvs: keyValues(res.KVs)}
}

func keyValues(kvs []client.KeyValue) []*mvccpb.KeyValue {
	var out []*mvccpb.KeyValue
	for _, kv := range kvs {
		out = append(out, &mvccpb.KeyValue{Key: []byte(kv.Key), Value: kv.Value,
			CreateRevision: int64(kv.Create), ModRevision: int64(kv.Mod), Version: int64(kv.Version)})
	}
	return out
}
