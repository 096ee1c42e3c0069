package etcdapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
)

// startGateway starts a three-replica cluster of proto in this process,
// its sites 1 ms apart, and a gateway at its first site; it returns an etcd
// client connected to the gateway.
func startGateway(t *testing.T, proto string) (*clientv3.Client, *cluster.Gateway) {
	t.Helper()
	cfg := config.Default()
	cfg.Protocol = proto
	cfg.Network.OneWayMs = 1
	require.NoError(t, cluster.FreePorts(&cfg))
	l, err := cluster.StartLocal(&cfg, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(l.Stop)
	g, err := cluster.StartGateway(&cfg, cfg.Replicas[0].Site, cluster.GatewayOptions{Listen: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	t.Cleanup(g.Stop)
	return dial(t, g), g
}

func dial(t *testing.T, g *cluster.Gateway) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{g.Addr()}, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestEtcdClientKV: put, get (linearizable and serializable), delete and
// what is not supported, through etcd's own client, for every protocol.
func TestEtcdClientKV(t *testing.T) {
	for _, proto := range []string{"curp", "curp-ht", "curp-ho", "raft"} {
		t.Run(proto, func(t *testing.T) {
			c, _ := startGateway(t, proto)
			ctx := ctx(t)
			put, err := c.Put(ctx, "greeting", "hello")
			require.NoError(t, err)
			require.Positive(t, put.Header.Revision, "a put's revision is its slot")

			got, err := c.Get(ctx, "greeting")
			require.NoError(t, err)
			require.Len(t, got.Kvs, 1)
			require.Equal(t, "hello", string(got.Kvs[0].Value))
			require.Equal(t, int64(1), got.Count)

			got, err = c.Get(ctx, "greeting", clientv3.WithSerializable())
			require.NoError(t, err)
			require.Len(t, got.Kvs, 1, "a serializable read of the session's own write")
			require.Equal(t, "hello", string(got.Kvs[0].Value))

			got, err = c.Get(ctx, "greeting", clientv3.WithKeysOnly())
			require.NoError(t, err)
			require.Empty(t, got.Kvs[0].Value)

			del, err := c.Delete(ctx, "greeting")
			require.NoError(t, err)
			_ = del // TODO(deleted count): the protocols do not report whether a deleted key existed
			got, err = c.Get(ctx, "greeting")
			require.NoError(t, err)
			require.Empty(t, got.Kvs)
			require.Zero(t, got.Count)

			_, err = c.Get(ctx, "a", clientv3.WithPrefix())
			requireUnimplemented(t, err, "several keys")
			_, err = c.Txn(ctx).Then(clientv3.OpPut("a", "1")).Commit()
			requireUnimplemented(t, err, "Txn")
			_, err = c.Grant(ctx, 10)
			requireUnimplemented(t, err, "Lease")
		})
	}
}

func requireUnimplemented(t *testing.T, err error, says string) {
	t.Helper()
	require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), says)
}

// TestWeakWritesAndSharedSessions: a write whose metadata asks for weak
// consistency is a weak write, and two connections naming one session
// share its guarantees: the second reads the first's weak write with a
// serializable read at once (read-your-writes).
func TestWeakWritesAndSharedSessions(t *testing.T) {
	a, g := startGateway(t, "curp-ho")
	b := dial(t, g)
	shared := metadata.AppendToOutgoingContext(ctx(t), "hybridkv-session", "s1", "hybridkv-consistency", "weak")
	for i := range 20 {
		v := string(rune('a' + i))
		_, err := a.Put(shared, "k", v)
		require.NoError(t, err)
		got, err := b.Get(shared, "k", clientv3.WithSerializable())
		require.NoError(t, err)
		require.Len(t, got.Kvs, 1)
		require.Equal(t, v, string(got.Kvs[0].Value), "the shared session did not read its own write")
	}
	bad := metadata.AppendToOutgoingContext(ctx(t), "hybridkv-consistency", "eventual")
	_, err := a.Put(bad, "k", "v")
	require.Equal(t, codes.InvalidArgument, status.Code(err))
}

// TestStatusAndMembers: what etcdctl endpoint status and member list show.
func TestStatusAndMembers(t *testing.T) {
	c, g := startGateway(t, "raft")
	ctx := ctx(t)
	_, err := c.Put(ctx, "k", "v") // the client then knows the leader
	require.NoError(t, err)
	st, err := c.Status(ctx, g.Addr())
	require.NoError(t, err)
	require.Equal(t, "3.7.0-hybridkv", st.Version)
	require.NotZero(t, st.Leader)
	ms, err := c.MemberList(ctx)
	require.NoError(t, err)
	require.Len(t, ms.Members, 3)
}

// TestGatewayRefusesPlainTCPOffLoopback: without TLS the gateway serves
// loopback clients only.
func TestGatewayRefusesPlainTCPOffLoopback(t *testing.T) {
	cfg := config.Default()
	_, err := cluster.StartGateway(&cfg, cfg.Replicas[0].Site, cluster.GatewayOptions{Listen: "0.0.0.0:0"}, nil)
	require.ErrorContains(t, err, "not a loopback address")
}
