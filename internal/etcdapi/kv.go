package etcdapi

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hybridkv/hybridkv/client"
)

// Range reads on the protocol's own path, a STRONG read, or a WEAK one
// when serializable: one key as a get, several keys, or a count, as a
// scan.
func (s *Server) Range(ctx context.Context, r *pb.RangeRequest) (*pb.RangeResponse, error) {
	op, err := rangeOp(r)
	if err != nil {
		return nil, err
	}
	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	level := client.Strong
	if r.Serializable {
		level = client.Weak
	}
	if len(r.RangeEnd) > 0 || r.CountOnly || r.Limit < 0 {
		sr, res, err := sess.Scan(ctx, op, level)
		if err != nil {
			return nil, failed(err)
		}
		s.served.record("range (scan)", res)
		return rangeResponse(s.header(res.Slot), sr), nil
	}
	res, err := sess.Do(ctx, client.Get, string(r.Key), nil, level)
	if err != nil {
		return nil, failed(err)
	}
	s.served.record("range", res)
	resp := &pb.RangeResponse{Header: s.header(res.Slot)}
	if !res.Found {
		return resp, nil
	}
	resp.Count = 1
	kv := &mvccpb.KeyValue{Key: r.Key, ModRevision: int64(res.Revision.Mod),
		CreateRevision: int64(res.Revision.Create), Version: int64(res.Revision.Version)}
	if !r.KeysOnly {
		kv.Value = res.Value
	}
	resp.Kvs = []*mvccpb.KeyValue{kv}
	return resp, nil
}

// Put writes one key on the protocol's own path, STRONG unless the
// request's metadata asks for WEAK. With prev_kv it is a transaction: the
// overwritten version is known only where the put is applied.
func (s *Server) Put(ctx context.Context, r *pb.PutRequest) (*pb.PutResponse, error) {
	op, err := putOp(r)
	if err != nil {
		return nil, err
	}
	sess, level, err := s.writeSession(ctx)
	if err != nil {
		return nil, err
	}
	if r.PrevKv {
		if level == client.Weak {
			return nil, status.Error(codes.InvalidArgument, "hybridkv: a put with prev_kv is a transaction, which is always strong")
		}
		res, slot, err := s.runOne(ctx, sess, op)
		if err != nil {
			return nil, err
		}
		return putResponse(s.header(slot), res), nil
	}
	res, err := sess.Do(ctx, client.Put, string(r.Key), r.Value, level)
	if err != nil {
		return nil, failed(err)
	}
	s.served.record("put", res)
	return &pb.PutResponse{Header: s.header(res.Slot)}, nil
}

// DeleteRange deletes keys as a transaction, which reports how many it
// removed. A WEAK delete (metadata) of one key takes the weak path
// instead, which cannot know whether the key was there: it reports 0.
func (s *Server) DeleteRange(ctx context.Context, r *pb.DeleteRangeRequest) (*pb.DeleteRangeResponse, error) {
	op := deleteOp(r)
	sess, level, err := s.writeSession(ctx)
	if err != nil {
		return nil, err
	}
	if level == client.Weak {
		if len(r.RangeEnd) > 0 || r.PrevKv {
			return nil, status.Error(codes.InvalidArgument, "hybridkv: a weak delete removes one key and returns nothing of it")
		}
		res, err := sess.Do(ctx, client.Delete, string(r.Key), nil, level)
		if err != nil {
			return nil, failed(err)
		}
		s.served.record("delete", res)
		return &pb.DeleteRangeResponse{Header: s.header(res.Slot)}, nil
	}
	res, slot, err := s.runOne(ctx, sess, op)
	if err != nil {
		return nil, err
	}
	return deleteResponse(s.header(slot), res), nil
}

// Txn runs etcd's transaction as one hybridkv transaction: ordered
// through the log, answered once applied.
func (s *Server) Txn(ctx context.Context, r *pb.TxnRequest) (*pb.TxnResponse, error) {
	txn, err := transaction(r)
	if err != nil {
		return nil, err
	}
	if level, err := writeLevel(ctx); err != nil {
		return nil, err
	} else if level == client.Weak {
		return nil, status.Error(codes.InvalidArgument, "hybridkv: a transaction is always strong")
	}
	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	tr, res, err := sess.Txn(ctx, txn)
	if err != nil {
		return nil, failed(err)
	}
	s.served.record("txn", res)
	return txnResponse(s.header(res.Slot), txn, tr), nil
}

// runOne runs one operation as a transaction and returns its answer and
// the slot it took.
func (s *Server) runOne(ctx context.Context, sess *client.Session, op client.TxnOp) (*client.TxnOpResult, uint64, error) {
	tr, res, err := sess.Txn(ctx, &client.Txn{Then: []client.TxnOp{op}})
	if err != nil {
		return nil, 0, failed(err)
	}
	s.served.record(kindOf(op)+" (txn)", res)
	return &tr.Results[0], res.Slot, nil
}

// Compact is not supported: hybridkv keeps no history of values to compact.
func (s *Server) Compact(context.Context, *pb.CompactionRequest) (*pb.CompactionResponse, error) {
	return nil, unsupported("Compact: hybridkv keeps no past revisions to compact")
}

func (s *Server) writeSession(ctx context.Context) (*client.Session, client.Level, error) {
	level, err := writeLevel(ctx)
	if err != nil {
		return nil, 0, err
	}
	sess, err := s.session(ctx)
	return sess, level, err
}

func unsupported(what string) error {
	return status.Error(codes.Unimplemented, "hybridkv: "+what)
}

func kindOf(op client.TxnOp) string {
	switch op.Kind {
	case client.Get:
		return "range"
	case client.Put:
		return "put"
	}
	return "delete"
}
