package transport

import (
	"bytes"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait in these tests; only a broken transport hits it.
const waitFor = 5 * time.Second

type delivery struct {
	from wire.NodeID
	m    wire.Message
	at   time.Time
}

// inbox collects what a transport's handler receives.
type inbox struct{ ch chan delivery }

func newInbox() *inbox { return &inbox{ch: make(chan delivery, 1024)} }

func (in *inbox) handle(from wire.NodeID, m wire.Message) {
	in.ch <- delivery{from: from, m: m, at: time.Now()}
}

func (in *inbox) next(t testing.TB) delivery {
	t.Helper()
	select {
	case d := <-in.ch:
		return d
	case <-time.After(waitFor):
		t.Fatal("no message arrived")
		return delivery{}
	}
}

// start builds a transport that is closed when the test ends.
func start(t testing.TB, cfg Config, h Handler) *Transport {
	t.Helper()
	tr, err := New(cfg, h)
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	return tr
}

// listen starts a transport that accepts on a free loopback port.
func listen(t testing.TB, self wire.NodeID, site uint32, delay *DelayModel, h Handler) *Transport {
	t.Helper()
	return start(t, Config{Self: self, Site: site, Listen: "127.0.0.1:0", Delay: delay}, h)
}

func waitConnected(t testing.TB, tr *Transport, to wire.NodeID) {
	t.Helper()
	require.Eventually(t, func() bool { return tr.Connected(to) }, waitFor, time.Millisecond)
}

func request(seq uint64) *wire.Request {
	return &wire.Request{Op: wire.Op{ID: wire.OpID{Session: 7, Seq: seq}, Kind: wire.Put, Key: strconv.FormatUint(seq, 10), Value: []byte("v")}}
}

// requireSame compares messages by encoding, which covers every message
// type including raft's protobuf structs.
func requireSame(t testing.TB, want, got wire.Message) {
	t.Helper()
	require.True(t, bytes.Equal(wire.Append(nil, want), wire.Append(nil, got)), "got %#v, want %#v", got, want)
}

// discardServer accepts connections and throws away what they send; it lets
// allocation tests see the send path alone.
func discardServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Go(func() { drain(nc) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func drain(nc net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := nc.Read(buf); err != nil {
			return
		}
	}
}
