package etcdapi_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
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

func dial(t *testing.T, g *cluster.Gateway) *clientv3.Client { return dialAddr(t, g.Addr()) }

func dialAddr(t *testing.T, addr string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestEtcdClientKV: etcd's own client against a gateway of every
// protocol, in this process and as separate processes.
func TestEtcdClientKV(t *testing.T) {
	for _, proto := range tested {
		t.Run(proto+"/in-process", func(t *testing.T) {
			c, _ := startGateway(t, proto)
			kvSemantics(t, c)
		})
		t.Run(proto+"/processes", func(t *testing.T) {
			p := startProcesses(t, proto, 1)
			kvSemantics(t, dialAddr(t, p.gateway))
		})
	}
}

// tested are the protocols every test here runs (see protocols.TestNames):
// not the leaderless ones, which have no store-wide revision for etcd's
// API to report (see docs/etcd.md).
var tested = withRevisions(protocols.TestNames())

// tlsTested are the protocols TestGatewayTLS runs: the links' TLS is the
// same for every protocol, so under the race detector a sample (see
// protocols.ProcessTestNames).
var tlsTested = withRevisions(protocols.ProcessTestNames())

// withRevisions leaves out of names the leaderless protocols.
func withRevisions(names []string) []string {
	return slices.DeleteFunc(names, func(name string) bool {
		p, err := protocols.Lookup(name)
		return err == nil && p.Leaderless
	})
}

// kvSemantics checks put, get (linearizable and serializable), ranges,
// deletes, transactions, revisions and what is not supported.
func kvSemantics(t *testing.T, c *clientv3.Client) {
	ctx := ctx(t)
	put, err := c.Put(ctx, "greeting", "hello")
	require.NoError(t, err)
	created := put.Header.Revision
	require.Positive(t, created, "a put's revision is its slot")

	got, err := c.Get(ctx, "greeting")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1)
	require.Equal(t, "hello", string(got.Kvs[0].Value))
	require.Equal(t, int64(1), got.Count)
	require.Equal(t, created, got.Kvs[0].ModRevision)
	require.Equal(t, created, got.Kvs[0].CreateRevision)
	require.Equal(t, int64(1), got.Kvs[0].Version)

	got, err = c.Get(ctx, "greeting", clientv3.WithSerializable())
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1, "a serializable read of the session's own write")
	require.Equal(t, "hello", string(got.Kvs[0].Value))

	again, err := c.Put(ctx, "greeting", "hi", clientv3.WithPrevKV())
	require.NoError(t, err)
	require.NotNil(t, again.PrevKv)
	require.Equal(t, "hello", string(again.PrevKv.Value))
	require.Greater(t, again.Header.Revision, created)
	got, err = c.Get(ctx, "greeting", clientv3.WithKeysOnly())
	require.NoError(t, err)
	require.Empty(t, got.Kvs[0].Value)
	require.Equal(t, int64(2), got.Kvs[0].Version)
	require.Equal(t, created, got.Kvs[0].CreateRevision)
	require.Equal(t, again.Header.Revision, got.Kvs[0].ModRevision)

	for _, k := range []string{"app/b", "app/a", "app/c", "apq"} {
		_, err := c.Put(ctx, k, "v-"+k)
		require.NoError(t, err)
	}
	pre, err := c.Get(ctx, "app/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Equal(t, []string{"app/a", "app/b", "app/c"}, keys(pre.Kvs))
	require.Equal(t, "v-app/a", string(pre.Kvs[0].Value))
	lim, err := c.Get(ctx, "app/", clientv3.WithPrefix(), clientv3.WithLimit(2), clientv3.WithSerializable())
	require.NoError(t, err)
	require.Equal(t, []string{"app/a", "app/b"}, keys(lim.Kvs))
	require.True(t, lim.More)
	require.Equal(t, int64(3), lim.Count)
	cnt, err := c.Get(ctx, "app/a", clientv3.WithRange("app/c"), clientv3.WithCountOnly())
	require.NoError(t, err)
	require.Empty(t, cnt.Kvs)
	require.Equal(t, int64(2), cnt.Count)
	all, err := c.Get(ctx, "", clientv3.WithFromKey())
	require.NoError(t, err)
	require.Equal(t, []string{"app/a", "app/b", "app/c", "apq", "greeting"}, keys(all.Kvs))

	del, err := c.Delete(ctx, "greeting")
	require.NoError(t, err)
	require.Equal(t, int64(1), del.Deleted)
	del, err = c.Delete(ctx, "greeting")
	require.NoError(t, err)
	require.Zero(t, del.Deleted, "a delete of a missing key")
	got, err = c.Get(ctx, "greeting")
	require.NoError(t, err)
	require.Empty(t, got.Kvs)
	require.Zero(t, got.Count)
	del, err = c.Delete(ctx, "app/", clientv3.WithPrefix(), clientv3.WithPrevKV())
	require.NoError(t, err)
	require.Equal(t, int64(3), del.Deleted)
	require.Equal(t, []string{"app/a", "app/b", "app/c"}, keys(del.PrevKvs))

	tx, err := c.Txn(ctx).If(clientv3.Compare(clientv3.Value("apq"), "=", "v-apq"),
		clientv3.Compare(clientv3.Version("nothing"), "=", 0)).
		Then(clientv3.OpPut("apq", "swapped"), clientv3.OpPut("t/x", "1"), clientv3.OpGet("apq")).
		Else(clientv3.OpPut("lost", "1")).Commit()
	require.NoError(t, err)
	require.True(t, tx.Succeeded)
	require.Len(t, tx.Responses, 3)
	rng := tx.Responses[2].GetResponseRange()
	require.Equal(t, "swapped", string(rng.Kvs[0].Value))
	require.Equal(t, tx.Header.Revision, rng.Kvs[0].ModRevision, "a transaction's writes share its revision")
	tx, err = c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision("apq"), "<", 1)).
		Then(clientv3.OpDelete("apq")).Else(clientv3.OpGet("t/", clientv3.WithPrefix())).Commit()
	require.NoError(t, err)
	require.False(t, tx.Succeeded)
	require.Equal(t, []string{"t/x"}, keys(tx.Responses[0].GetResponseRange().Kvs))
	lost, err := c.Get(ctx, "lost")
	require.NoError(t, err)
	require.Empty(t, lost.Kvs, "the else branch of a transaction that succeeded ran")

	_, err = c.Get(ctx, "a", clientv3.WithRev(1))
	requireUnimplemented(t, err, "past revision")
	_, err = c.Grant(ctx, 10)
	requireUnimplemented(t, err, "Lease")
	_, err = c.Compact(ctx, 1)
	requireUnimplemented(t, err, "Compact")
	wch := c.Watch(ctx, "k")
	w := <-wch
	require.Error(t, w.Err())
}

func keys(kvs []*mvccpb.KeyValue) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, string(kv.Key))
	}
	return out
}

func requireUnimplemented(t *testing.T, err error, says string) {
	t.Helper()
	require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), says)
}

// TestWeakWritesAndSharedSessions: a write whose metadata asks for weak
// consistency is a weak write, and two connections naming one session
// share its guarantees: the second reads the first's weak write with a
// serializable read and a serializable scan at once (read-your-writes),
// under every protocol (the
// ones without a weak path serve both as strong).
func TestWeakWritesAndSharedSessions(t *testing.T) {
	for _, proto := range tested {
		t.Run(proto+"/processes", func(t *testing.T) {
			p := startProcesses(t, proto, 1)
			sharedSession(t, dialAddr(t, p.gateway), dialAddr(t, p.gateway))
		})
		t.Run(proto+"/in-process", func(t *testing.T) {
			a, g := startGateway(t, proto)
			b := dial(t, g)
			sharedSession(t, a, b)
			served := g.Served()
			if p, err := protocols.Lookup(proto); err == nil && !p.WeakAsStrong {
				// Pileus sends every write as a strong one.
				if proto != "pileus" {
					require.Regexp(t, `put: 20 ops.*paths weak 20 \(100.0%\)\n`, served, "the writes took the weak path")
				}
				require.Regexp(t, `range: 20 ops.*paths weak 20 \(100.0%\)\n`, served, "the reads took the weak path")
				require.Regexp(t, `range \(scan\): 20 ops.*paths weak 20 \(100.0%\)\n`, served, "the scans took the weak path")
			}
			bad := metadata.AppendToOutgoingContext(ctx(t), "hybridkv-consistency", "eventual")
			_, err := a.Put(bad, "k", "v")
			require.Equal(t, codes.InvalidArgument, status.Code(err))
			_, err = a.Txn(metadata.AppendToOutgoingContext(ctx(t), "hybridkv-consistency", "weak")).Commit()
			require.Equal(t, codes.InvalidArgument, status.Code(err), "a weak transaction")
		})
	}
}

// sharedSession has a write weakly through a and reads it serializably
// through b, with a get and a scan, in one session named by both, twenty
// times.
func sharedSession(t *testing.T, a, b *clientv3.Client) {
	shared := metadata.AppendToOutgoingContext(ctx(t), "hybridkv-session", "s1", "hybridkv-consistency", "weak")
	for i := range 20 {
		v := string(rune('a' + i))
		_, err := a.Put(shared, "k", v)
		require.NoError(t, err)
		got, err := b.Get(shared, "k", clientv3.WithSerializable())
		require.NoError(t, err)
		require.Len(t, got.Kvs, 1)
		require.Equal(t, v, string(got.Kvs[0].Value), "the shared session did not read its own write")
		scan, err := b.Get(shared, "", clientv3.WithFromKey(), clientv3.WithSerializable())
		require.NoError(t, err)
		require.Equal(t, []string{"k"}, keys(scan.Kvs), "a serializable scan")
		require.Equal(t, v, string(scan.Kvs[0].Value), "the shared session's scan did not read its own write")
	}
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

func contextTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	t.Helper()
	return context.WithTimeout(context.Background(), d)
}
