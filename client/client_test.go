package client_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/transport"
	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testConfig is the default three-site deployment on free loopback ports,
// with delays and retries short enough for tests to finish quickly.
func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Network.OneWayMs = 1
	cfg.Client.RetryMs = 100
	cfg.Client.TimeoutMs = 8000
	require.NoError(t, cluster.FreePorts(&cfg))
	require.NoError(t, cfg.Validate())
	return &cfg
}

func startLocal(t *testing.T, cfg *config.Config) *cluster.Local {
	t.Helper()
	l, err := cluster.StartLocal(cfg, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(l.Stop)
	return l
}

func newClient(t *testing.T, cfg *config.Config) *client.Client {
	t.Helper()
	cc, err := cluster.ClientConfig(cfg, cfg.Sites[0])
	require.NoError(t, err)
	c, err := client.New(cc)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// deadConfig points a client at loopback ports nothing listens on, so every
// operation stays unanswered.
func deadConfig(t *testing.T) client.Config {
	t.Helper()
	cfg := config.Default()
	require.NoError(t, cluster.FreePorts(&cfg))
	cc := client.Config{Protocol: cfg.Protocol, Tick: 5 * time.Millisecond, Retry: 20 * time.Millisecond}
	for _, r := range cfg.Replicas {
		cc.Replicas = append(cc.Replicas, client.Replica{ID: r.ID, Addr: r.Addr})
	}
	return cc
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  client.Config
	}{
		{"no replicas", client.Config{Protocol: "curp"}},
		{"unknown protocol", client.Config{Protocol: "paxos", Replicas: []client.Replica{{ID: 1, Addr: "127.0.0.1:1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.New(tt.cfg)
			require.Error(t, err)
			require.Nil(t, c)
		})
	}
}

func TestPutGet(t *testing.T) {
	cfg := testConfig(t)
	startLocal(t, cfg)
	c := newClient(t, cfg)
	// Under CURP a weak operation takes the strong path, so it must read
	// its own session's earlier writes just like a strong one.
	require.True(t, c.WeakAsStrong())
	ctx := testContext(t)

	tests := []struct {
		name  string
		level client.Level
		key   string
	}{
		{"strong", client.Strong, "user1"},
		{"weak", client.Weak, "\x00binary\xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := c.NewSession()
			_, found, err := s.Get(ctx, tt.key, tt.level)
			require.NoError(t, err)
			require.False(t, found, "key never written")

			want := fmt.Appendf(nil, "value-%q", tt.key)
			r, err := s.Do(ctx, client.Put, tt.key, want, tt.level)
			require.NoError(t, err)
			require.NotEqual(t, clientcore.PathWeak, r.Path)
			require.Positive(t, r.Latency)

			got, found, err := s.Get(ctx, tt.key, tt.level)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, want, got)

			// A fresh session has no session order with the writer; the
			// write completed before it started, so linearizability alone
			// makes it visible.
			got, found, err = c.NewSession().Get(ctx, tt.key, tt.level)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, want, got)

			// A delete makes the key absent, to its session and to a
			// fresh one; deleting it again is no error.
			require.NoError(t, s.Delete(ctx, tt.key, tt.level))
			_, found, err = s.Get(ctx, tt.key, tt.level)
			require.NoError(t, err)
			require.False(t, found, "key deleted")
			_, found, err = c.NewSession().Get(ctx, tt.key, tt.level)
			require.NoError(t, err)
			require.False(t, found, "key deleted")
			require.NoError(t, s.Delete(ctx, tt.key, tt.level))
		})
	}
}

// TestPipelining keeps a window of operations in flight on one session,
// refilling it from the completion callbacks. Each read targets a key whose
// write had already completed when the read was submitted.
func TestPipelining(t *testing.T) {
	const (
		total  = 200
		window = 20
	)
	cfg := testConfig(t)
	startLocal(t, cfg)
	c := newClient(t, cfg)
	s := c.NewSession()

	var (
		mu        sync.Mutex
		calls     [total]int
		errs      []error
		next      int
		written   []string // keys whose write has completed
		outcomes  = make(chan struct{}, 2*total)
		submitOne func()
	)
	value := func(key string) []byte { return fmt.Appendf(nil, "v%s", key) }
	// submitOne must be called with mu held.
	submitOne = func() {
		i := next
		next++
		kind, key := client.Put, strconv.Itoa(i)
		if i%2 == 1 && len(written) > 0 {
			kind, key = client.Get, written[i%len(written)]
		}
		s.Submit(kind, key, value(key), client.Strong, func(r client.Result) {
			mu.Lock()
			defer mu.Unlock()
			calls[i]++
			switch {
			case r.Err != nil:
				errs = append(errs, fmt.Errorf("op %d: %w", i, r.Err))
			case kind == client.Put:
				written = append(written, key)
			case !r.Found || string(r.Value) != string(value(key)):
				errs = append(errs, fmt.Errorf("op %d: get %s = %q, %v", i, key, r.Value, r.Found))
			}
			if next < total {
				submitOne()
			}
			outcomes <- struct{}{}
		})
	}
	mu.Lock()
	for range window {
		submitOne()
	}
	mu.Unlock()

	deadline := time.After(8 * time.Second)
	for range total {
		select {
		case <-outcomes:
		case <-deadline:
			t.Fatalf("not every operation completed")
		}
	}
	// Give a duplicate completion a chance to show up before counting.
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, errs)
	for i, n := range calls {
		require.Equal(t, 1, n, "callback of op %d", i)
	}
	require.Empty(t, outcomes)
}

func TestConcurrentSessions(t *testing.T) {
	const (
		goroutines = 8
		sessions   = 2
		ops        = 10
	)
	cfg := testConfig(t)
	startLocal(t, cfg)
	clients := []*client.Client{newClient(t, cfg), newClient(t, cfg)}
	ctx := testContext(t)

	var wg sync.WaitGroup
	for g := range goroutines {
		c := clients[g%len(clients)]
		for si := range sessions {
			wg.Go(func() {
				s := c.NewSession()
				for k := range ops {
					key := strconv.Itoa(g*1000 + si*100 + k)
					want := fmt.Appendf(nil, "%d/%d/%d", g, si, k)
					if !assert.NoError(t, s.Put(ctx, key, want, client.Strong)) {
						return
					}
					got, found, err := s.Get(ctx, key, client.Weak)
					if !assert.NoError(t, err) {
						return
					}
					assert.True(t, found)
					assert.Equal(t, want, got)
				}
			})
		}
	}
	wg.Wait()
}

func TestDoContextEnds(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"already cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"short deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.New(deadConfig(t))
			require.NoError(t, err)
			defer c.Close()
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			_, err = c.NewSession().Do(ctx, client.Put, "1", []byte("x"), client.Strong)
			require.ErrorIs(t, err, tt.want)
			require.Less(t, time.Since(start), time.Second)
		})
	}
}

// silentReplica accepts connections at addr and counts the requests it
// receives per operation, never answering.
type silentReplica struct {
	tr *transport.Transport
	mu sync.Mutex
	n  map[wire.OpID]int
}

func newSilentReplica(t *testing.T, id uint64, addr string) *silentReplica {
	t.Helper()
	r := &silentReplica{n: make(map[wire.OpID]int)}
	tr, err := transport.New(transport.Config{Self: wire.NodeID(id), Listen: addr},
		func(_ wire.NodeID, m wire.Message) {
			if req, ok := m.(*wire.Request); ok {
				r.mu.Lock()
				r.n[req.Op.ID]++
				r.mu.Unlock()
			}
		})
	require.NoError(t, err)
	r.tr = tr
	t.Cleanup(func() { tr.Close() })
	return r
}

func (r *silentReplica) count(id wire.OpID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

// TestDoContextEndAbandonsCall checks that a call given up by Do stops being
// re-sent, while the session goes on to its next operation.
func TestDoContextEndAbandonsCall(t *testing.T) {
	cc := deadConfig(t)
	var replicas []*silentReplica
	for _, r := range cc.Replicas {
		replicas = append(replicas, newSilentReplica(t, r.ID, r.Addr))
	}
	sent := func(id wire.OpID) int {
		n := 0
		for _, r := range replicas {
			n += r.count(id)
		}
		return n
	}
	c, err := client.New(cc)
	require.NoError(t, err)
	defer c.Close()
	s := c.NewSession()
	first := wire.OpID{Session: s.ID(), Seq: 1}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = s.Do(ctx, client.Put, "1", []byte("x"), client.Strong)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Greater(t, sent(first), len(replicas), "the operation was never retried")

	// Let frames already on the wire arrive, then expect silence over many
	// retry periods.
	time.Sleep(100 * time.Millisecond)
	before := sent(first)
	time.Sleep(10 * cc.Retry)
	require.Equal(t, before, sent(first), "an abandoned call is still being retried")

	second := wire.OpID{Session: s.ID(), Seq: 2}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.Do(ctx, client.Get, "1", nil, client.Strong)
	}()
	require.Eventually(t, func() bool { return sent(second) > 0 }, 2*time.Second, 10*time.Millisecond)
}

func TestTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	tests := []struct {
		name string
		run  func(s *client.Session) (client.Result, error)
	}{
		// The context outlives the timeout by far; it only keeps a client
		// that never times out from hanging the test.
		{"Do", func(s *client.Session) (client.Result, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*timeout)
			defer cancel()
			return s.Do(ctx, client.Get, "1", nil, client.Strong)
		}},
		{"Submit", func(s *client.Session) (client.Result, error) {
			ch := make(chan client.Result, 1)
			s.Submit(client.Put, "1", []byte("x"), client.Weak, func(r client.Result) { ch <- r })
			select {
			case r := <-ch:
				return r, r.Err
			case <-time.After(10 * timeout):
				return client.Result{}, errors.New("no outcome")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := deadConfig(t)
			cc.Timeout = timeout
			c, err := client.New(cc)
			require.NoError(t, err)
			defer c.Close()
			start := time.Now()
			r, err := tt.run(c.NewSession())
			elapsed := time.Since(start)
			require.ErrorIs(t, err, client.ErrTimeout)
			require.ErrorIs(t, r.Err, client.ErrTimeout)
			require.GreaterOrEqual(t, elapsed, timeout)
			require.Less(t, elapsed, 5*timeout)
		})
	}
}

func TestClose(t *testing.T) {
	t.Run("in-flight operations fail with ErrClosed", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		c, err := client.New(deadConfig(t))
		require.NoError(t, err)
		const n = 50
		var (
			mu    sync.Mutex
			calls [n]int
			errs  [n]error
		)
		s := c.NewSession()
		for i := range n {
			s.Submit(client.Put, strconv.Itoa(i), []byte("x"), client.Strong, func(r client.Result) {
				mu.Lock()
				defer mu.Unlock()
				calls[i]++
				errs[i] = r.Err
			})
		}
		doErr := make(chan error, 1)
		go func() {
			_, err := c.NewSession().Do(context.Background(), client.Get, "1", nil, client.Strong)
			doErr <- err
		}()
		// Let the loop pick some of them up, so both queued and accepted
		// calls are in flight when Close runs.
		time.Sleep(30 * time.Millisecond)
		require.NoError(t, c.Close())
		mu.Lock()
		defer mu.Unlock()
		for i := range n {
			require.Equal(t, 1, calls[i], "callback of op %d", i)
			require.ErrorIs(t, errs[i], client.ErrClosed, "op %d", i)
		}
		select {
		case err := <-doErr:
			require.ErrorIs(t, err, client.ErrClosed)
		case <-time.After(2 * time.Second):
			t.Fatal("Do did not return after Close")
		}
	})

	t.Run("operations after Close fail with ErrClosed", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		c, err := client.New(deadConfig(t))
		require.NoError(t, err)
		s := c.NewSession()
		require.NoError(t, c.Close())
		require.NoError(t, c.Close())

		var got []error
		s.Submit(client.Put, "1", []byte("x"), client.Strong, func(r client.Result) { got = append(got, r.Err) })
		require.Len(t, got, 1, "callback must run before Submit returns")
		require.ErrorIs(t, got[0], client.ErrClosed)

		_, err = s.Do(context.Background(), client.Put, "1", []byte("x"), client.Strong)
		require.ErrorIs(t, err, client.ErrClosed)
		_, _, err = c.NewSession().Get(context.Background(), "1", client.Weak)
		require.ErrorIs(t, err, client.ErrClosed)
	})

	t.Run("callbacks that resubmit", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		c, err := client.New(deadConfig(t))
		require.NoError(t, err)
		s := c.NewSession()
		var retries atomic.Int32
		for i := range 10 {
			s.Submit(client.Put, strconv.Itoa(i), nil, client.Strong, func(r client.Result) {
				s.Submit(client.Put, strconv.Itoa(i), nil, client.Strong, func(r client.Result) {
					if errors.Is(r.Err, client.ErrClosed) {
						retries.Add(1)
					}
				})
			})
		}
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		select {
		case err := <-closed:
			require.NoError(t, err)
		case <-time.After(2 * time.Second):
			t.Fatal("Close deadlocked")
		}
		require.Equal(t, int32(10), retries.Load())
	})

	t.Run("Submit racing Close", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		c, err := client.New(deadConfig(t))
		require.NoError(t, err)
		const (
			goroutines = 4
			perG       = 200
		)
		var calls [goroutines][perG]atomic.Int32
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				s := c.NewSession()
				for i := range perG {
					s.Submit(client.Put, strconv.Itoa(i), nil, client.Strong, func(r client.Result) {
						if assert.ErrorIs(t, r.Err, client.ErrClosed) {
							calls[g][i].Add(1)
						}
					})
					if i == perG/4 && g == 0 {
						go c.Close()
					}
				}
			})
		}
		wg.Wait()
		require.NoError(t, c.Close())
		for g := range goroutines {
			for i := range perG {
				require.Equal(t, int32(1), calls[g][i].Load(), "goroutine %d op %d", g, i)
			}
		}
	})
}

// TestClientBeforeCluster submits operations while nothing listens yet: the
// transport redials with backoff, the core re-sends, and the operations
// complete once the replicas are up.
func TestClientBeforeCluster(t *testing.T) {
	cfg := testConfig(t)
	c := newClient(t, cfg)
	ctx := testContext(t)
	s := c.NewSession()

	const n = 10
	done := make(chan client.Result, n)
	for i := range n {
		s.Submit(client.Put, strconv.Itoa(i), fmt.Appendf(nil, "v%d", i), client.Strong, func(r client.Result) { done <- r })
	}
	doErr := make(chan error, 1)
	go func() { doErr <- c.NewSession().Put(ctx, "100", []byte("early"), client.Weak) }()

	// Long enough for several dials to fail and several retries to be
	// dropped for want of a connection.
	time.Sleep(300 * time.Millisecond)
	require.Empty(t, done)
	startLocal(t, cfg)

	for range n {
		select {
		case r := <-done:
			require.NoError(t, r.Err)
		case <-ctx.Done():
			t.Fatal("operations submitted before the cluster started never completed")
		}
	}
	require.NoError(t, <-doErr)
	for i := range n {
		v, found, err := s.Get(ctx, strconv.Itoa(i), client.Strong)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, fmt.Sprintf("v%d", i), string(v))
	}
	v, found, err := s.Get(ctx, "100", client.Strong)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "early", string(v))
}
