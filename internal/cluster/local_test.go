package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startCluster(t testing.TB, n int, oneWayMs float64) (*config.Config, *cluster.Local) {
	t.Helper()
	cfg := config.Default()
	cfg.Sites = nil
	cfg.Replicas = nil
	cfg.Clients.Sites = nil
	for i := range n {
		cfg.Sites = append(cfg.Sites, fmt.Sprintf("s%d", i))
	}
	raw, err := cfg.YAML()
	require.NoError(t, err)
	cfg, err = config.Parse(raw)
	require.NoError(t, err)
	cfg.Network.OneWayMs = oneWayMs
	require.NoError(t, cluster.FreePorts(&cfg))
	l, err := cluster.StartLocal(&cfg, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(l.Stop)
	return &cfg, l
}

func newClient(t testing.TB, cfg *config.Config, site string) *client.Client {
	t.Helper()
	cc, err := cluster.ClientConfig(cfg, site)
	require.NoError(t, err)
	c, err := client.New(cc)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestPutGetOverTCP runs real replicas over loopback with emulated delay and
// checks strong reads see strong writes, from clients at every site.
func TestPutGetOverTCP(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			cfg, l := startCluster(t, n, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			paths := make([]map[clientcore.Path]int, len(cfg.Sites))
			for i, site := range cfg.Sites {
				c := newClient(t, cfg, site)
				paths[i] = map[clientcore.Path]int{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := c.NewSession()
					for k := range uint64(50) {
						key := fmt.Sprint(uint64(i)*1000 + k)
						v := fmt.Appendf(nil, "v%s", key)
						r, err := s.Do(ctx, client.Put, key, v, client.Strong)
						if !assertNoErr(t, err) {
							return
						}
						paths[i][r.Path]++
						got, found, err := s.Get(ctx, key, client.Strong)
						if !assertNoErr(t, err) {
							return
						}
						require.True(t, found)
						require.Equal(t, string(v), string(got))
					}
				}()
			}
			wg.Wait()
			require.Eventually(t, func() bool {
				sts := l.Statuses()
				for _, st := range sts[1:] {
					if st.Applied != sts[0].Applied || st.Digest != sts[0].Digest {
						return false
					}
				}
				return true
			}, 5*time.Second, 10*time.Millisecond, "replicas did not converge")
			t.Logf("paths per client: %v", paths)
		})
	}
}

func assertNoErr(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("operation failed: %v", err)
		return false
	}
	return true
}
