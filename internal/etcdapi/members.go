package etcdapi

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

// Status reports the replica beside the gateway and the leader its client
// knows, which is what etcdctl endpoint status prints.
//
// hybridkv has no backend database, and the gateway does not know the
// replicas' disks: it reports a database of one byte, with an error saying
// so, since etcdctl's table divides by the size and a zero would crash it.
func (s *Server) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	return &pb.StatusResponse{Header: s.header(0), Version: s.cfg.Version,
		Leader: s.cfg.Client.Leader(), DbSize: 1, DbSizeInUse: 1,
		Errors: []string{"hybridkv: no backend database; db size not known to the gateway (shown as 1 B)"}}, nil
}

// MemberList lists the cluster's replicas.
func (s *Server) MemberList(context.Context, *pb.MemberListRequest) (*pb.MemberListResponse, error) {
	resp := &pb.MemberListResponse{Header: s.header(0)}
	for _, m := range s.cfg.Members {
		pm := &pb.Member{ID: m.ID, Name: m.Name, PeerURLs: []string{m.PeerURL}}
		if m.ClientURL != "" {
			pm.ClientURLs = []string{m.ClientURL}
		}
		resp.Members = append(resp.Members, pm)
	}
	return resp, nil
}
