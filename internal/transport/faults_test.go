package transport

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// quiet is how long a test waits to be confident a dropped frame is not
// merely late; loopback delivers in well under a millisecond.
const quiet = 150 * time.Millisecond

// pair is a server node 1 and a client node that dialed it; the server
// answers on the connection the client opened.
type pair struct {
	srv, cli     *Transport
	atSrv, atCli *inbox
}

const pairClient = wire.FirstClientID + 1

func newPair(t *testing.T, cliFaults *Faults) *pair {
	t.Helper()
	p := &pair{atSrv: newInbox(), atCli: newInbox()}
	p.srv = listen(t, 1, 0, nil, p.atSrv.handle)
	p.cli = start(t, Config{Self: pairClient, Peers: map[wire.NodeID]Peer{1: {Addr: p.srv.Addr().String()}}, Faults: cliFaults}, p.atCli.handle)
	waitConnected(t, p.cli, 1)
	// The server can answer only once it has read the client's Hello and
	// a first frame.
	p.cli.Send(1, request(0))
	p.atSrv.next(t)
	return p
}

// exchange sends one frame each way and reports which arrived.
func (p *pair) exchange(t *testing.T, seq uint64) (toSrv, toCli bool) {
	t.Helper()
	p.cli.Send(1, request(seq))
	p.srv.Send(pairClient, request(seq))
	deadline := time.After(quiet)
	for {
		select {
		case d := <-p.atSrv.ch:
			requireSame(t, request(seq), d.m)
			toSrv = true
		case d := <-p.atCli.ch:
			requireSame(t, request(seq), d.m)
			toCli = true
		case <-deadline:
			return toSrv, toCli
		}
	}
}

func TestRuleValidation(t *testing.T) {
	bad := []Rule{
		{Dir: "sideways", Drop: 1},
		{Drop: 1.5},
		{Drop: -0.1},
		{Dir: In, DelayMs: 10},
		{DelayMs: 10}, // empty direction is both, and delay is outgoing only
		{Dir: Out, DelayMs: -1},
		{Peers: []uint64{2}},
	}
	var f Faults
	for _, r := range bad {
		require.Error(t, f.Set(RuleSet{Rules: []Rule{r}}), "%+v", r)
	}
	require.Nil(t, f.state(), "a rejected set must leave the links healthy")
	require.NoError(t, f.Set(RuleSet{Rules: []Rule{{Dir: Out, DelayMs: 5, JitterMs: 2}, {Drop: 1, Sites: []uint32{2}}}}))
	require.NotNil(t, f.state())
	require.NoError(t, f.Set(RuleSet{}))
	require.Nil(t, f.state(), "an empty set heals")
}

// A blackhole in one direction leaves the other working, on both the
// dialing and the accepting side, and healing restores both.
func TestOneWayBlock(t *testing.T) {
	tests := []struct {
		name         string
		dir          Direction
		toSrv, toCli bool
		onServerSide bool
	}{
		{"client out", Out, false, true, false},
		{"client in", In, true, false, false},
		{"client both", Both, false, false, false},
		{"server out", Out, true, false, true},
		{"server in", In, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPair(t, nil)
			holder, peer := p.cli, wire.NodeID(1)
			if tt.onServerSide {
				holder, peer = p.srv, pairClient
			}
			require.NoError(t, holder.Faults().Set(RuleSet{Rules: []Rule{{Peers: []uint64{uint64(peer)}, Dir: tt.dir, Drop: 1}}}))
			toSrv, toCli := p.exchange(t, 1)
			require.Equal(t, tt.toSrv, toSrv, "client to server")
			require.Equal(t, tt.toCli, toCli, "server to client")
			blocked := 0
			for _, ok := range []bool{toSrv, toCli} {
				if !ok {
					blocked++
				}
			}
			require.Equal(t, uint64(blocked), holder.Stats().Faulted, "each lost frame counted once")
			require.True(t, p.cli.Connected(1), "a blackhole keeps the connection up")

			holder.Faults().Clear()
			toSrv, toCli = p.exchange(t, 2)
			require.True(t, toSrv && toCli, "healed")
		})
	}
}

// A rule for another peer or site leaves this link alone.
func TestRuleMatchesOnlyItsPeers(t *testing.T) {
	p := newPair(t, nil)
	require.NoError(t, p.cli.Faults().Set(RuleSet{Rules: []Rule{{Peers: []uint64{7}, Sites: []uint32{3}, Drop: 1}}}))
	toSrv, toCli := p.exchange(t, 1)
	require.True(t, toSrv && toCli)
	require.NoError(t, p.cli.Faults().Set(RuleSet{Rules: []Rule{{Sites: []uint32{0}, Drop: 1}}}))
	toSrv, toCli = p.exchange(t, 2)
	require.False(t, toSrv || toCli, "the server is at site 0")
}

func TestDropFraction(t *testing.T) {
	var f Faults
	require.NoError(t, f.Set(RuleSet{Seed: 9, Rules: []Rule{{Drop: 0.3}}}))
	const n = 20000
	lost := 0
	var draws []bool
	for range n {
		drop, _ := f.state().outgoing(2, 0)
		draws = append(draws, drop)
		if drop {
			lost++
		}
	}
	require.InDelta(t, 0.3, float64(lost)/n, 0.015)

	// The same seed draws the same frames.
	var g Faults
	require.NoError(t, g.Set(RuleSet{Seed: 9, Rules: []Rule{{Drop: 0.3}}}))
	for i := range 100 {
		drop, _ := g.state().outgoing(2, 0)
		require.Equal(t, draws[i], drop, "draw %d", i)
	}
}

// Over a real link, a lossy rule loses about its fraction of frames and the
// rest still arrive in order.
func TestDropFractionOnTheWire(t *testing.T) {
	p := newPair(t, nil)
	require.NoError(t, p.cli.Faults().Set(RuleSet{Seed: 1, Rules: []Rule{{Dir: Out, Drop: 0.5}}}))
	const n = 2000
	for i := range n {
		p.cli.Send(1, request(uint64(i+1)))
	}
	require.Eventually(t, func() bool {
		st := p.cli.Stats()
		return st.Faulted+p.srv.Stats().Received-1 == n
	}, waitFor, time.Millisecond)
	got := len(p.atSrv.ch)
	require.InDelta(t, n/2, got, n/10)
	last := uint64(0)
	for range got {
		seq := (<-p.atSrv.ch).m.(*wire.Request).Op.ID.Seq
		require.Greater(t, seq, last)
		last = seq
	}
}

func TestDelayApplied(t *testing.T) {
	p := newPair(t, nil)
	const extra = 80 * time.Millisecond
	require.NoError(t, p.cli.Faults().Set(RuleSet{Rules: []Rule{{Dir: Out, DelayMs: 80, JitterMs: 20}}}))
	sent := time.Now()
	const n = 50
	for i := range n {
		p.cli.Send(1, request(uint64(i+1)))
	}
	for i := range n {
		d := p.atSrv.next(t)
		require.Equal(t, uint64(i+1), d.m.(*wire.Request).Op.ID.Seq, "jitter must not reorder")
		require.GreaterOrEqual(t, d.at.Sub(sent), extra-20*time.Millisecond)
	}
	// The other direction is not slowed.
	start := time.Now()
	p.srv.Send(pairClient, request(99))
	p.atCli.next(t)
	require.Less(t, time.Since(start), extra/2)

	p.cli.Faults().Clear()
	start = time.Now()
	p.cli.Send(1, request(100))
	p.atSrv.next(t)
	require.Less(t, time.Since(start), extra/2, "healed")
}

// The same rules hold on a transport sharing a Faults given in its Config,
// as a client library does.
func TestFaultsGivenInConfig(t *testing.T) {
	f := new(Faults)
	p := newPair(t, f)
	require.Same(t, f, p.cli.Faults())
	require.NoError(t, f.Set(RuleSet{Rules: []Rule{{Peers: []uint64{1}, Drop: 1}}}))
	toSrv, toCli := p.exchange(t, 1)
	require.False(t, toSrv || toCli)
}

func TestHandlerChangesRunningTransport(t *testing.T) {
	p := newPair(t, nil)
	srv := httptest.NewServer(p.cli.Faults().Handler())
	defer srv.Close()
	do := func(method, body string) (int, RuleSet) {
		req, err := http.NewRequest(method, srv.URL+"/faults", strings.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var rs RuleSet
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&rs))
		}
		return resp.StatusCode, rs
	}

	code, rs := do(http.MethodGet, "")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, rs.Rules)

	code, rs = do(http.MethodPost, `{"rules":[{"peers":[1],"dir":"both","drop":1}]}`)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, rs.Rules, 1)
	toSrv, toCli := p.exchange(t, 1)
	require.False(t, toSrv || toCli, "blackholed through the endpoint")
	_, rs = do(http.MethodGet, "")
	require.Equal(t, []uint64{1}, rs.Rules[0].Peers)

	code, _ = do(http.MethodPost, `{"rules":[{"dir":"in","delay_ms":5}]}`)
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = do(http.MethodPost, `{"rulez":[]}`)
	require.Equal(t, http.StatusBadRequest, code)
	_, rs = do(http.MethodGet, "")
	require.Len(t, rs.Rules, 1, "a rejected set leaves the rules in force")

	code, rs = do(http.MethodDelete, "")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, rs.Rules)
	toSrv, toCli = p.exchange(t, 2)
	require.True(t, toSrv && toCli, "healed through the endpoint")
}

func TestHandlerRefusesRemoteCallers(t *testing.T) {
	var f Faults
	h := f.Handler()
	req := httptest.NewRequest(http.MethodPost, "/faults", bytes.NewBufferString(`{"rules":[{"drop":1}]}`))
	req.RemoteAddr = "192.0.2.7:4000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Nil(t, f.state())
}
