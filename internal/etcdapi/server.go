package etcdapi

import (
	"context"
	"fmt"
	"sync"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/hybridkv/hybridkv/client"
)

// Member describes one replica for Cluster.MemberList.
type Member struct {
	ID   uint64
	Name string
	// PeerURL is the replica's address; ClientURL the gateway serving its
	// site, if any.
	PeerURL, ClientURL string
}

// Config describes a gateway.
type Config struct {
	// Client is the gateway's connection to the cluster.
	Client *client.Client
	// Self is the replica the gateway stands beside (its site's), reported
	// as the member answering Maintenance.Status.
	Self uint64
	// Members lists the cluster's replicas.
	Members []Member
	// ClusterID identifies the cluster in response headers.
	ClusterID uint64
	// Version is reported by Maintenance.Status.
	Version string
}

// Server serves etcd's API over one hybridkv client.
type Server struct {
	pb.UnimplementedKVServer
	pb.UnimplementedMaintenanceServer
	pb.UnimplementedClusterServer
	cfg Config

	mu     sync.Mutex
	shared map[string]*client.Session // by the name in hybridkv-session
	served *served
}

// New returns a gateway over cfg.Client.
func New(cfg Config) *Server {
	return &Server{cfg: cfg, shared: make(map[string]*client.Session), served: newServed()}
}

// Served reports the operations served so far: per kind of request, how
// many, on which paths (fast, slow, weak, log) and their latency
// percentiles as the gateway measured them.
func (s *Server) Served() string { return s.served.Summary() }

// ServerOptions are the gRPC options a gateway needs: a session per
// connection, and a message naming what is not supported for services it
// does not serve.
func (s *Server) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.StatsHandler(connSessions{s}),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			method, _ := grpc.MethodFromServerStream(stream)
			return status.Errorf(codes.Unimplemented,
				"hybridkv serves etcd's KV (Range, Put, DeleteRange), Maintenance.Status and Cluster.MemberList; %s is not supported", method)
		}),
	}
}

// Register registers the gateway's services on g.
func (s *Server) Register(g *grpc.Server) {
	pb.RegisterKVServer(g, s)
	pb.RegisterMaintenanceServer(g, s)
	pb.RegisterClusterServer(g, s)
}

// sessionKey marks a connection's context with its session.
type sessionKey struct{}

// connSessions gives every gRPC connection a hybridkv session of its own.
type connSessions struct{ s *Server }

func (h connSessions) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, sessionKey{}, h.s.cfg.Client.NewSession())
}
func (connSessions) HandleConn(context.Context, stats.ConnStats) {}
func (connSessions) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (connSessions) HandleRPC(context.Context, stats.RPCStats) {}

// SessionMetadata names a session shared by the connections that carry
// it; ConsistencyMetadata ("weak" or "strong") sets a write's level.
const (
	SessionMetadata     = "hybridkv-session"
	ConsistencyMetadata = "hybridkv-consistency"
)

// session returns the request's session: the shared one its metadata
// names, else its connection's.
func (s *Server) session(ctx context.Context) (*client.Session, error) {
	if name := metadataValue(ctx, SessionMetadata); name != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		sess := s.shared[name]
		if sess == nil {
			sess = s.cfg.Client.NewSession()
			s.shared[name] = sess
		}
		return sess, nil
	}
	if sess, ok := ctx.Value(sessionKey{}).(*client.Session); ok {
		return sess, nil
	}
	return nil, status.Error(codes.Internal, "no session for this connection")
}

// writeLevel is a write's consistency: strong unless its metadata asks for
// weak.
func writeLevel(ctx context.Context) (client.Level, error) {
	switch v := metadataValue(ctx, ConsistencyMetadata); v {
	case "", "strong", "linearizable":
		return client.Strong, nil
	case "weak", "causal":
		return client.Weak, nil
	default:
		return 0, status.Errorf(codes.InvalidArgument, "%s: %q is neither strong nor weak", ConsistencyMetadata, v)
	}
}

func metadataValue(ctx context.Context, name string) string {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ""
	}
	if vs := md.Get(name); len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// header is a response header at revision rev.
func (s *Server) header(rev uint64) *pb.ResponseHeader {
	return &pb.ResponseHeader{ClusterId: s.cfg.ClusterID, MemberId: s.cfg.Self,
		Revision: int64(rev), RaftTerm: 0}
}

// failed turns an operation's error into a gRPC status: a timeout leaves
// the operation's outcome unknown, as etcd's does.
func failed(err error) error {
	switch {
	case err == nil:
		return nil
	case status.Code(err) != codes.Unknown:
		return err
	case err == context.DeadlineExceeded:
		return status.Error(codes.DeadlineExceeded, err.Error())
	case err == context.Canceled:
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Unavailable, fmt.Sprintf("hybridkv: %v", err))
}

// Version is the version Maintenance.Status reports: the etcd API version
// the gateway speaks, marked as hybridkv's.
const Version = "3.7.0-hybridkv"
