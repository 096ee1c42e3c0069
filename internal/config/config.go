package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcores"
	"github.com/hybridkv/hybridkv/internal/quorum"
	"go.yaml.in/yaml/v3"
)

// Protocol names accepted in Config.Protocol.
const (
	ProtocolCURP   = "curp"
	ProtocolCURPHT = "curp-ht"
	ProtocolCURPHO = "curp-ho"
	ProtocolRaft   = "raft"
)

// Protocols lists the accepted protocol names, default first.
var Protocols = clientcores.Names()

// Config describes one deployment and the benchmark run against it.
type Config struct {
	// Protocol is the replication protocol every replica and client runs:
	// one of Protocols. Default "curp".
	Protocol string `yaml:"protocol"`
	// Sites names the locations processes run at; delays are emulated
	// between sites, never within one. Default ["site0", "site1", "site2"].
	Sites []string `yaml:"sites"`
	// Replicas lists the replica processes. Default (also when the file gives
	// none): one replica per site, in site order, with IDs 1, 2, ... and
	// addresses 127.0.0.1:7001, 127.0.0.1:7002, ...
	Replicas []Replica `yaml:"replicas"`
	// Clients places the benchmark's client processes.
	Clients Clients `yaml:"clients"`
	// Network is the wide-area emulation.
	Network Network `yaml:"network"`
	// Raft holds the timing of log replication, shared by every protocol
	// (all of them order writes through a raft log).
	Raft RaftParams `yaml:"raft"`
	// Storage says how replicas keep their state on disk.
	Storage Storage `yaml:"storage"`
	// TLS turns on mutual TLS on every link. Without it traffic is plain
	// TCP, which a replica accepts only on loopback addresses unless
	// started with --insecure. `hybridkv certs` writes the files.
	TLS TLSFiles `yaml:"tls"`
	// Client holds client-side timeouts.
	Client ClientParams `yaml:"client"`
	// Bench is the benchmark workload.
	Bench Bench `yaml:"bench"`
}

// Replica is one replica process.
type Replica struct {
	// ID is the replica's raft ID, in [1, 2^32): IDs from 2^32 up name
	// clients. No default for an explicitly listed replica.
	ID uint64 `yaml:"id"`
	// Addr is the host:port the replica listens on and peers dial.
	Addr string `yaml:"addr"`
	// Site is one of Config.Sites.
	Site string `yaml:"site"`
	// DataDir is the directory holding the replica's raft log, hard state
	// and snapshots; a restarted replica resumes from it. Default (when
	// empty): hybridkv-data/replica-<id> under the server's working
	// directory. `hybridkv cluster` and `bench` give each replica its own
	// under their run directory.
	DataDir string `yaml:"data_dir"`
}

// Clients places the client processes.
type Clients struct {
	// Sites has one entry per client process: the site it runs at. Default
	// (also when the file gives none): one client at each site that hosts a
	// replica, in order of first appearance in Replicas, so each client is
	// co-located with a replica as in the reference setup.
	Sites []string `yaml:"sites"`
	// Threads is the number of sessions (concurrent logical clients) in each
	// client process. Default 2.
	Threads int `yaml:"threads"`
}

// Network is the emulated wide-area network.
type Network struct {
	// OneWayMs is the one-way delay in milliseconds between any two distinct
	// sites that Matrix does not override. Default 25 (a 50 ms round trip).
	OneWayMs float64 `yaml:"one_way_ms"`
	// JitterMs is the bound of a random extra delay added to each message,
	// in milliseconds; per-connection FIFO order is kept regardless.
	// Default 0.
	JitterMs float64 `yaml:"jitter_ms"`
	// Matrix overrides OneWayMs per site pair: Matrix[a][b] is the one-way
	// delay from a to b in milliseconds. A pair given in one direction only
	// applies to both. Default none.
	Matrix map[string]map[string]float64 `yaml:"matrix"`
	// Emulate turns the delays on. Off, messages go out at once: the setting
	// for real multi-machine deployments. Default true.
	Emulate bool `yaml:"emulate"`
	// FlushDelayUs is how long, in microseconds, a connection's writer waits
	// for more messages before flushing, trading latency for fewer system
	// calls. Default 0 (flush as soon as the send queue is empty).
	FlushDelayUs int `yaml:"flush_delay_us"`
}

// RaftParams is the timing of leader election and log replication.
type RaftParams struct {
	// TickMs is the length of one raft tick in milliseconds. Default 10.
	TickMs int `yaml:"tick_ms"`
	// ElectionTicks is the election timeout in ticks (randomized by raft up
	// to twice this). It must exceed HeartbeatTicks. Default 50 (500 ms):
	// about ten round trips of the default emulated WAN, as etcd advises,
	// so a leader whose CPU is saturated, or who is snapshotting, is not
	// deposed while it still leads.
	ElectionTicks int `yaml:"election_ticks"`
	// HeartbeatTicks is the leader's heartbeat interval in ticks. Default 5
	// (50 ms, about one round trip). Commits do not wait for heartbeats: a
	// leader tells followers of a new commit index at once.
	HeartbeatTicks int `yaml:"heartbeat_ticks"`
	// BatchDelayUs is how long, in microseconds, the leader gathers
	// operations before proposing them as one batch. Default 100.
	BatchDelayUs int `yaml:"batch_delay_us"`
	// MaxBatch caps the operations in one proposal batch; a full batch is
	// proposed without waiting out BatchDelayUs. Default 256.
	MaxBatch int `yaml:"max_batch"`
	// SessionExpiryS is how long, in seconds of the leaders' ticks, a
	// client session may apply no operation before the replicas forget it
	// and the results they kept for its retries. An operation retried, or
	// held back by a replica cut off from the others, for longer than this
	// would take effect twice, so it is at least ten times
	// client.timeout_ms. 0 keeps every session for good. Default 3600.
	SessionExpiryS int `yaml:"session_expiry_s"`
}

// Storage says how replicas keep their state on disk.
type Storage struct {
	// Fsync syncs the write-ahead log before a replica sends anything that
	// depends on it, as raft requires. Off, a power cut (not a process
	// crash) can lose acknowledged writes: for pure protocol benchmarks
	// only. Default true.
	Fsync bool `yaml:"fsync"`
	// SyncDelayUs is how long, in microseconds, a replica's disk writer
	// waits before its next sync when rounds queued up during the last
	// one: under load more rounds then share a sync, and the syncs'
	// kernel work takes less of the CPU; an idle writer syncs at once.
	// Only with fsync. Default 500.
	SyncDelayUs int `yaml:"sync_delay_us"`
}

// TLSFiles names the files of a deployment's mutual TLS.
type TLSFiles struct {
	// CA is the certificate authority that verifies every peer.
	CA string `yaml:"ca"`
	// Cert and Key are a replica's certificate and key; "{id}" in them
	// stands for the replica's id.
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// ClientCert and ClientKey are a client's; "{site}" stands for the
	// client's site.
	ClientCert string `yaml:"client_cert"`
	ClientKey  string `yaml:"client_key"`
}

// Enabled reports whether TLS is configured.
func (t TLSFiles) Enabled() bool { return t.CA != "" }

// ForReplica returns replica id's certificate and key paths.
func (t TLSFiles) ForReplica(id uint64) (cert, key string) {
	r := strings.NewReplacer("{id}", strconv.FormatUint(id, 10))
	return r.Replace(t.Cert), r.Replace(t.Key)
}

// ForClient returns the certificate and key paths of a client at site.
func (t TLSFiles) ForClient(site string) (cert, key string) {
	r := strings.NewReplacer("{site}", site)
	return r.Replace(t.ClientCert), r.Replace(t.ClientKey)
}

// DataDir is replica id's data directory: its configured one, or the
// default under the working directory.
func (c *Config) DataDir(id uint64) string {
	for _, r := range c.Replicas {
		if r.ID == id && r.DataDir != "" {
			return r.DataDir
		}
	}
	return filepath.Join("hybridkv-data", fmt.Sprintf("replica-%d", id))
}

// ClientParams are the client library's timeouts.
type ClientParams struct {
	// RetryMs is how long, in milliseconds, a client waits for an answer
	// before re-sending an operation (with the same identity, so it still
	// takes effect once). Default 500.
	RetryMs int `yaml:"retry_ms"`
	// TimeoutMs is how long, in milliseconds, a client keeps retrying an
	// operation before failing it. Must be at least RetryMs. Default 10000.
	TimeoutMs int `yaml:"timeout_ms"`
	// WeakWriteAck is when a weak write is answered: "commit" once it is
	// committed, or "leader" once the leader's own log holds it, before
	// replication (lost if the leader fails first; only for the protocols
	// whose weak writes go to the leader alone). Default "commit".
	WeakWriteAck string `yaml:"weak_write_ack"`
}

// Weak write acknowledgements (ClientParams.WeakWriteAck).
const (
	AckOnCommit = "commit"
	AckOnLeader = "leader"
)

// AckWeakWritesOnLog reports whether weak writes are answered once the
// leader logged them.
func (c ClientParams) AckWeakWritesOnLog() bool { return c.WeakWriteAck == AckOnLeader }

// Bench is the benchmark workload. Percentages are whole numbers in [0, 100].
type Bench struct {
	// Reqs is the number of operations each session issues; 0 runs for
	// DurationS instead. Default 0.
	Reqs int `yaml:"reqs"`
	// DurationS is the measured window in seconds when Reqs is 0. Default 15,
	// so a default run, start-up and warm-up included, takes well under a
	// minute.
	DurationS float64 `yaml:"duration_s"`
	// WarmupS is how long, in seconds, sessions run before measurement
	// starts, so connection set-up and the first election are not measured.
	// Default 3.
	WarmupS float64 `yaml:"warmup_s"`
	// Pendings is the most operations a session keeps in flight at once.
	// Default 1 (closed loop).
	Pendings int `yaml:"pendings"`
	// Writes is the percentage of strong operations that are writes.
	// Default 10.
	Writes int `yaml:"writes"`
	// WeakRatio is the percentage of operations that are weak. Default 50.
	// Protocols without weak operations serve them as strong ones.
	WeakRatio int `yaml:"weak_ratio"`
	// WeakWrites is the percentage of weak operations that are writes.
	// Default 10.
	WeakWrites int `yaml:"weak_writes"`
	// Conflicts is the percentage of operations that go to one shared hot
	// key instead of a key drawn from the distribution. Default 0.
	Conflicts int `yaml:"conflicts"`
	// KeySpace is the number of distinct keys, 0 .. KeySpace-1.
	// Default 1,000,000.
	KeySpace uint64 `yaml:"key_space"`
	// ZipfSkew is the skew of the key distribution (Zipf's theta), in
	// [0, 2]: 0 is uniform, 0.99 is YCSB's usual value, and from 1 on a
	// few keys take most operations. Default 0.99.
	ZipfSkew float64 `yaml:"zipf_skew"`
	// CommandSize is the size of a written value in bytes, at least 16
	// because every value embeds the 16-byte identity of the operation that
	// wrote it (so reads can be traced to writes), at most 1 MiB. Default 100.
	CommandSize int `yaml:"command_size"`
	// Seed seeds the workload generators; runs with the same seed and
	// configuration issue the same operations. Default 1.
	Seed uint64 `yaml:"seed"`
	// YCSB, when set, draws the kinds of operations from one of YCSB's
	// core workloads (a, b, c, d, e, f; see package workload) instead of
	// Writes and WeakWrites; WeakRatio still sets the weak share.
	// Default "": the write shares above.
	YCSB string `yaml:"ycsb"`
	// YCSBWeak names the kinds of YCSB operations that may be weak (read,
	// update, insert, rmw, scan); the others run strong. Default: every
	// kind.
	YCSBWeak []string `yaml:"ycsb_weak,omitempty"`
	// Mix, when set, names a mix that fixes every operation's kind and
	// level together (tao; see package workload): Writes, WeakRatio and
	// WeakWrites then do not apply, and YCSB and YCSBWeak may not be set.
	// KeySpace, ZipfSkew and Conflicts still choose the keys. Default "".
	Mix string `yaml:"mix"`
	// Preload writes every key of the key space once, before the warm-up,
	// so that the run measures a store that already holds all its keys:
	// its state, and the replicas' memory, then stays the same size over a
	// long run instead of growing with the keys the run first touches.
	// The load phase is checked but not measured. Default false.
	Preload bool `yaml:"preload"`
}

// Limits that validation enforces.
const (
	// MaxReplicaID is the largest replica ID; larger IDs belong to clients.
	MaxReplicaID = 1<<32 - 1
	// MinCommandSize is the smallest value size: a value carries the 16-byte
	// identity of its write.
	MinCommandSize = 16
	// MaxCommandSize bounds value sizes well below the wire's frame limit.
	MaxCommandSize = 1 << 20
)

// Default returns the default configuration: CURP on three replicas at three
// sites 25 ms apart, one two-session client next to each replica.
func Default() Config {
	c := Config{
		Protocol: ProtocolCURP,
		Sites:    []string{"site0", "site1", "site2"},
		Clients:  Clients{Threads: 2},
		Network: Network{
			OneWayMs: 25,
			Emulate:  true,
		},
		Raft: RaftParams{
			TickMs:         10,
			ElectionTicks:  50,
			HeartbeatTicks: 5,
			BatchDelayUs:   100,
			MaxBatch:       256,
			SessionExpiryS: 3600,
		},
		Storage: Storage{Fsync: true, SyncDelayUs: 500},
		Client: ClientParams{
			RetryMs:      500,
			TimeoutMs:    10000,
			WeakWriteAck: AckOnCommit,
		},
		Bench: Bench{
			DurationS:   15,
			WarmupS:     3,
			Pendings:    1,
			Writes:      10,
			WeakRatio:   50,
			WeakWrites:  10,
			KeySpace:    1_000_000,
			ZipfSkew:    0.99,
			CommandSize: 100,
			Seed:        1,
		},
	}
	c.FillDerived()
	return c
}

// Clone returns a copy of c that shares none of its lists or maps, for a
// caller that rewrites parts of it (the addresses a run draws) while the
// original serves again (an experiment's next point).
func (c Config) Clone() Config {
	c.Sites = slices.Clone(c.Sites)
	c.Replicas = slices.Clone(c.Replicas)
	c.Clients.Sites = slices.Clone(c.Clients.Sites)
	c.Bench.YCSBWeak = slices.Clone(c.Bench.YCSBWeak)
	if c.Network.Matrix != nil {
		m := make(map[string]map[string]float64, len(c.Network.Matrix))
		for from, row := range c.Network.Matrix {
			m[from] = maps.Clone(row)
		}
		c.Network.Matrix = m
	}
	return c
}

// Resize lays the cluster out as n replicas at n sites, each with a
// co-located client; n <= 0 leaves no sites, for FillDerived to refuse.
func (c *Config) Resize(n int) {
	c.Sites = nil
	for i := range max(n, 0) {
		c.Sites = append(c.Sites, fmt.Sprintf("site%d", i))
	}
	c.Replicas = nil
	c.Clients.Sites = nil
	if n > 0 {
		c.FillDerived()
	}
}

// FillDerived fills the lists whose defaults depend on other fields: replicas
// from sites, client sites from replicas.
func (c *Config) FillDerived() {
	if len(c.Replicas) == 0 {
		c.Replicas = make([]Replica, len(c.Sites))
		for i, s := range c.Sites {
			c.Replicas[i] = Replica{
				ID:   uint64(i + 1),
				Addr: fmt.Sprintf("127.0.0.1:%d", 7001+i),
				Site: s,
			}
		}
	}
	if len(c.Clients.Sites) == 0 {
		seen := make(map[string]bool)
		for _, r := range c.Replicas {
			if !seen[r.Site] {
				seen[r.Site] = true
				c.Clients.Sites = append(c.Clients.Sites, r.Site)
			}
		}
	}
}

// Load reads and parses the configuration file at path.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes a YAML configuration over the defaults and validates it.
// Fields the document leaves out keep their defaults; an empty document is
// the default configuration.
func Parse(data []byte) (Config, error) {
	c := Default()
	// Derived lists are re-derived after decoding, from whatever sites and
	// replicas the document chose, unless it lists them itself.
	c.Replicas = nil
	c.Clients.Sites = nil

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return Config{}, err
		}
		return Config{}, errors.New("more than one YAML document")
	}
	// An empty matrix reads back as an empty map; nil is the one
	// representation of "no overrides", so configs compare equal.
	if len(c.Network.Matrix) == 0 {
		c.Network.Matrix = nil
	}
	c.FillDerived()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// YAML encodes the configuration, every field included, in the form Parse
// reads back to an equal Config.
func (c Config) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SiteIndex returns the position of the named site in Sites: the site number
// processes exchange on the wire.
func (c *Config) SiteIndex(name string) (uint32, bool) {
	for i, s := range c.Sites {
		if s == name {
			return uint32(i), true
		}
	}
	return 0, false
}

// F is how many replicas may fail (quorum.F).
func (c *Config) F() int { return quorum.F(len(c.Replicas)) }

// Majority returns the replication quorum (quorum.Majority).
func (c *Config) Majority() int { return quorum.Majority(len(c.Replicas)) }

// Superquorum returns CURP's fast-path quorum (quorum.Superquorum).
func (c *Config) Superquorum() int { return quorum.Superquorum(len(c.Replicas)) }

// OneWay returns the one-way delay between every pair of sites, indexed by
// SiteIndex: zero on the diagonal, Network.Matrix where it has the pair (in
// either direction), Network.OneWayMs otherwise. With emulation off every
// delay is zero.
func (c *Config) OneWay() [][]time.Duration {
	n := len(c.Sites)
	d := make([][]time.Duration, n)
	for i := range d {
		d[i] = make([]time.Duration, n)
	}
	if !c.Network.Emulate {
		return d
	}
	for i, a := range c.Sites {
		for j, b := range c.Sites {
			if i == j {
				continue
			}
			ms := c.Network.OneWayMs
			if v, ok := c.Network.Matrix[a][b]; ok {
				ms = v
			} else if v, ok := c.Network.Matrix[b][a]; ok {
				ms = v
			}
			d[i][j] = millis(ms)
		}
	}
	return d
}

// Jitter returns the jitter bound, zero with emulation off.
func (n *Network) Jitter() time.Duration {
	if !n.Emulate {
		return 0
	}
	return millis(n.JitterMs)
}

// FlushDelay returns FlushDelayUs as a duration.
func (n *Network) FlushDelay() time.Duration {
	return time.Duration(n.FlushDelayUs) * time.Microsecond
}

// SessionExpiryTicks returns the session expiry in ticks.
func (r *RaftParams) SessionExpiryTicks() int {
	return int(int64(r.SessionExpiryS) * 1000 / int64(r.TickMs))
}

// Tick returns the raft tick length.
func (r *RaftParams) Tick() time.Duration { return time.Duration(r.TickMs) * time.Millisecond }

// SyncDelay returns how long a busy disk writer gathers rounds; 0 without
// fsync, where a write costs no sync to share.
func (s *Storage) SyncDelay() time.Duration {
	if !s.Fsync {
		return 0
	}
	return time.Duration(s.SyncDelayUs) * time.Microsecond
}

// BatchDelay returns the leader's batching delay.
func (r *RaftParams) BatchDelay() time.Duration {
	return time.Duration(r.BatchDelayUs) * time.Microsecond
}

// Retry returns the client's re-send interval.
func (p *ClientParams) Retry() time.Duration { return time.Duration(p.RetryMs) * time.Millisecond }

// Timeout returns how long a client retries an operation before failing it.
func (p *ClientParams) Timeout() time.Duration {
	return time.Duration(p.TimeoutMs) * time.Millisecond
}

// Duration returns the measured window (meaningful when Reqs is 0).
func (b *Bench) Duration() time.Duration { return seconds(b.DurationS) }

// Warmup returns the warm-up period.
func (b *Bench) Warmup() time.Duration { return seconds(b.WarmupS) }

func millis(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
