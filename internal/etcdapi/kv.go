package etcdapi

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hybridkv/hybridkv/client"
)

// Range reads one key: a STRONG read, or a WEAK one when serializable.
func (s *Server) Range(ctx context.Context, r *pb.RangeRequest) (*pb.RangeResponse, error) {
	if err := singleKeyRange(r); err != nil {
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
	res, err := sess.Do(ctx, client.Get, string(r.Key), nil, level)
	if err != nil {
		return nil, failed(err)
	}
	resp := &pb.RangeResponse{Header: s.header(res.Slot)}
	if !res.Found {
		return resp, nil
	}
	resp.Count = 1
	if r.CountOnly {
		return resp, nil
	}
	kv := &mvccpb.KeyValue{Key: r.Key, ModRevision: int64(res.Slot)}
	if !r.KeysOnly {
		kv.Value = res.Value
	}
	resp.Kvs = []*mvccpb.KeyValue{kv}
	return resp, nil
}

// singleKeyRange refuses what a read of one key cannot answer.
func singleKeyRange(r *pb.RangeRequest) error {
	switch {
	case len(r.RangeEnd) > 0:
		return unsupported("Range over several keys (range_end) is not supported yet; read one key at a time")
	case r.Revision > 0:
		return unsupported("Range at a past revision: hybridkv keeps only each key's latest value")
	case r.MinModRevision > 0 || r.MaxModRevision > 0 || r.MinCreateRevision > 0 || r.MaxCreateRevision > 0:
		return unsupported("Range's revision filters are not supported")
	}
	return nil
}

// Put writes one key, STRONG unless the request's metadata asks for WEAK.
func (s *Server) Put(ctx context.Context, r *pb.PutRequest) (*pb.PutResponse, error) {
	switch {
	case r.Lease != 0 || r.IgnoreLease:
		return nil, unsupported("leases are not supported")
	case r.IgnoreValue:
		return nil, unsupported("Put with ignore_value is not supported")
	case r.PrevKv:
		return nil, unsupported("Put with prev_kv is not supported yet")
	}
	sess, level, err := s.writeSession(ctx)
	if err != nil {
		return nil, err
	}
	res, err := sess.Do(ctx, client.Put, string(r.Key), r.Value, level)
	if err != nil {
		return nil, failed(err)
	}
	return &pb.PutResponse{Header: s.header(res.Slot)}, nil
}

// DeleteRange deletes one key, STRONG unless the request's metadata asks
// for WEAK.
func (s *Server) DeleteRange(ctx context.Context, r *pb.DeleteRangeRequest) (*pb.DeleteRangeResponse, error) {
	switch {
	case len(r.RangeEnd) > 0:
		return nil, unsupported("DeleteRange over several keys (range_end) is not supported yet; delete one key at a time")
	case r.PrevKv:
		return nil, unsupported("DeleteRange with prev_kv is not supported yet")
	}
	sess, level, err := s.writeSession(ctx)
	if err != nil {
		return nil, err
	}
	res, err := sess.Do(ctx, client.Delete, string(r.Key), nil, level)
	if err != nil {
		return nil, failed(err)
	}
	resp := &pb.DeleteRangeResponse{Header: s.header(res.Slot)}
	if res.Found {
		resp.Deleted = 1
	}
	return resp, nil
}

// Txn is not supported yet.
func (s *Server) Txn(context.Context, *pb.TxnRequest) (*pb.TxnResponse, error) {
	return nil, unsupported("Txn is not supported yet")
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
