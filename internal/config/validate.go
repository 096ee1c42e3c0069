package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/hybridkv/hybridkv/internal/workload"
)

// FieldError is one invalid field: Path is the field's location in the YAML
// document, such as "replicas[1].addr" or "bench.weak_ratio".
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// checker collects field errors so that one run of Validate reports all of
// them rather than making the user fix a file one mistake at a time.
type checker struct{ errs []error }

func (ck *checker) add(path, format string, args ...any) {
	ck.errs = append(ck.errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (ck *checker) atLeast(path string, v, min int) {
	if v < min {
		ck.add(path, "%d is less than %d", v, min)
	}
}

func (ck *checker) percent(path string, v int) {
	if v < 0 || v > 100 {
		ck.add(path, "%d is not a percentage", v)
	}
}

// delay checks a non-negative, finite number (NaN fails v >= 0).
func (ck *checker) delay(path string, v float64) {
	if !(v >= 0) || math.IsInf(v, 1) {
		ck.add(path, "%v is not a finite number ≥ 0", v)
	}
}

// Validate checks every field and returns all problems found, joined, each a
// *FieldError; nil when the configuration is usable.
func (c *Config) Validate() error {
	var ck checker
	if !slices.Contains(Protocols, c.Protocol) {
		ck.add("protocol", "%q is not one of %s", c.Protocol, strings.Join(Protocols, ", "))
	}

	sites := make(map[string]bool, len(c.Sites))
	if len(c.Sites) == 0 {
		ck.add("sites", "missing")
	}
	for i, s := range c.Sites {
		path := fmt.Sprintf("sites[%d]", i)
		switch {
		case s == "":
			ck.add(path, "empty name")
		case sites[s]:
			ck.add(path, "duplicate site %q", s)
		}
		sites[s] = true
	}
	knownSite := func(path, s string) {
		switch {
		case s == "":
			ck.add(path, "missing")
		case !sites[s]:
			ck.add(path, "unknown site %q", s)
		}
	}

	if n := len(c.Replicas); n < 3 || n%2 == 0 {
		ck.add("replicas", "have %d, need an odd number, at least 3", n)
	}
	ids := make(map[uint64]bool, len(c.Replicas))
	addrs := make(map[string]bool, len(c.Replicas))
	for i, r := range c.Replicas {
		path := fmt.Sprintf("replicas[%d]", i)
		switch {
		case r.ID < 1 || r.ID > MaxReplicaID:
			ck.add(path+".id", "%d is not in [1, %d]", r.ID, uint64(MaxReplicaID))
		case ids[r.ID]:
			ck.add(path+".id", "duplicate id %d", r.ID)
		}
		ids[r.ID] = true
		switch {
		case r.Addr == "":
			ck.add(path+".addr", "missing")
		case addrs[r.Addr]:
			ck.add(path+".addr", "duplicate address %q", r.Addr)
		default:
			if err := checkAddr(r.Addr); err != nil {
				ck.add(path+".addr", "%v", err)
			}
		}
		addrs[r.Addr] = true
		knownSite(path+".site", r.Site)
	}

	if len(c.Clients.Sites) == 0 {
		ck.add("clients.sites", "missing")
	}
	for i, s := range c.Clients.Sites {
		knownSite(fmt.Sprintf("clients.sites[%d]", i), s)
	}
	ck.atLeast("clients.threads", c.Clients.Threads, 1)

	n := &c.Network
	ck.delay("network.one_way_ms", n.OneWayMs)
	ck.delay("network.jitter_ms", n.JitterMs)
	ck.atLeast("network.flush_delay_us", n.FlushDelayUs, 0)
	// Sorted, so the same file always yields the same message.
	for _, a := range sortedKeys(n.Matrix) {
		path := "network.matrix." + a
		if !sites[a] {
			ck.add(path, "unknown site %q", a)
		}
		for _, b := range sortedKeys(n.Matrix[a]) {
			v := n.Matrix[a][b]
			switch {
			case !sites[b]:
				ck.add(path+"."+b, "unknown site %q", b)
			case a == b && v != 0:
				ck.add(path+"."+b, "%v ms, but a site is 0 ms from itself", v)
			default:
				ck.delay(path+"."+b, v)
			}
		}
	}

	r := &c.Raft
	ck.atLeast("raft.tick_ms", r.TickMs, 1)
	ck.atLeast("raft.heartbeat_ticks", r.HeartbeatTicks, 1)
	if r.ElectionTicks <= r.HeartbeatTicks {
		ck.add("raft.election_ticks", "%d must exceed raft.heartbeat_ticks (%d)",
			r.ElectionTicks, r.HeartbeatTicks)
	}
	ck.atLeast("raft.batch_delay_us", r.BatchDelayUs, 0)
	ck.atLeast("raft.max_batch", r.MaxBatch, 1)

	ck.atLeast("storage.sync_delay_us", c.Storage.SyncDelayUs, 0)

	ck.atLeast("client.retry_ms", c.Client.RetryMs, 1)
	if c.Client.TimeoutMs < c.Client.RetryMs {
		ck.add("client.timeout_ms", "%d is less than client.retry_ms (%d)",
			c.Client.TimeoutMs, c.Client.RetryMs)
	}
	switch c.Client.WeakWriteAck {
	case AckOnCommit, "":
	case AckOnLeader:
		// Whether the protocol can is the client's to say (it refuses).
	default:
		ck.add("client.weak_write_ack", "%q is not one of %s, %s", c.Client.WeakWriteAck, AckOnCommit, AckOnLeader)
	}
	if e := r.SessionExpiryS; e != 0 && int64(e)*1000 < 10*int64(c.Client.TimeoutMs) {
		ck.add("raft.session_expiry_s", "%d is less than ten times client.timeout_ms (%d ms): "+
			"a client may retry an operation after its session expired", e, c.Client.TimeoutMs)
	}

	b := &c.Bench
	ck.atLeast("bench.reqs", b.Reqs, 0)
	ck.delay("bench.duration_s", b.DurationS)
	if b.Reqs == 0 && b.DurationS == 0 {
		ck.add("bench.duration_s", "must be positive when bench.reqs is 0")
	}
	ck.delay("bench.warmup_s", b.WarmupS)
	ck.atLeast("bench.pendings", b.Pendings, 1)
	ck.percent("bench.writes", b.Writes)
	ck.percent("bench.weak_ratio", b.WeakRatio)
	ck.percent("bench.weak_writes", b.WeakWrites)
	ck.percent("bench.conflicts", b.Conflicts)
	if b.KeySpace < 1 {
		ck.add("bench.key_space", "%d is less than 1", b.KeySpace)
	}
	if !(b.ZipfSkew >= 0 && b.ZipfSkew <= workload.MaxZipfSkew) {
		ck.add("bench.zipf_skew", "%v is not in [0, %v]", b.ZipfSkew, workload.MaxZipfSkew)
	}
	if b.YCSB != "" && !slices.Contains(workload.YCSBWorkloads(), b.YCSB) {
		ck.add("bench.ycsb", "%q is not one of %s", b.YCSB, strings.Join(workload.YCSBWorkloads(), ", "))
	}
	for _, k := range b.YCSBWeak {
		if !slices.Contains(workload.YCSBKinds(), k) {
			ck.add("bench.ycsb_weak", "%q is not one of %s", k, strings.Join(workload.YCSBKinds(), ", "))
		}
	}
	b.validateMix(&ck)
	if b.CommandSize < MinCommandSize || b.CommandSize > MaxCommandSize {
		ck.add("bench.command_size", "%d is not in [%d, %d]",
			b.CommandSize, MinCommandSize, MaxCommandSize)
	}
	c.validateTLS(&ck)
	return errors.Join(ck.errs...)
}

// validateMix: a mix is one the workload draws, and the only thing
// choosing the operations' kinds and levels.
func (b *Bench) validateMix(ck *checker) {
	switch {
	case b.Mix == "":
	case !slices.Contains(workload.Mixes(), b.Mix):
		ck.add("bench.mix", "%q is not one of %s", b.Mix, strings.Join(workload.Mixes(), ", "))
	case b.YCSB != "":
		ck.add("bench.mix", "%q and bench.ycsb %q both choose the kinds of operations: set one", b.Mix, b.YCSB)
	case len(b.YCSBWeak) > 0:
		ck.add("bench.mix", "%q fixes every operation's level: bench.ycsb_weak does not apply", b.Mix)
	}
}

// checkAddr accepts host:port with a numeric, non-zero port, the form a peer
// can dial.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return fmt.Errorf("%q has no valid port", addr)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validateTLS: with a CA, every file a replica or client needs is named.
func (c *Config) validateTLS(ck *checker) {
	t := c.TLS
	if t == (TLSFiles{}) {
		return
	}
	for _, f := range []struct{ path, v string }{{"tls.ca", t.CA}, {"tls.cert", t.Cert}, {"tls.key", t.Key},
		{"tls.client_cert", t.ClientCert}, {"tls.client_key", t.ClientKey}} {
		if f.v == "" {
			ck.add(f.path, "missing: mutual TLS needs the CA, a replica's and a client's certificate and key")
		}
	}
}
