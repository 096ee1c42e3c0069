package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	want := []Replica{
		{ID: 1, Addr: "127.0.0.1:7001", Site: "site0"},
		{ID: 2, Addr: "127.0.0.1:7002", Site: "site1"},
		{ID: 3, Addr: "127.0.0.1:7003", Site: "site2"},
	}
	if !reflect.DeepEqual(c.Replicas, want) {
		t.Errorf("default replicas = %+v, want %+v", c.Replicas, want)
	}
	if !reflect.DeepEqual(c.Clients.Sites, c.Sites) {
		t.Errorf("default client sites = %v, want one per replica site %v", c.Clients.Sites, c.Sites)
	}
	if c.Protocol != ProtocolCURP || !c.Network.Emulate || c.Network.OneWayMs != 25 {
		t.Errorf("unexpected defaults: %+v", c)
	}
	// A default benchmark has to finish in about a minute, start-up included.
	if total := c.Bench.Warmup() + c.Bench.Duration(); c.Bench.Reqs != 0 || total > 45*time.Second {
		t.Errorf("default bench runs %v (reqs %d)", total, c.Bench.Reqs)
	}
	// Default must hand out fresh slices: callers edit their copy.
	c.Sites[0] = "changed"
	c.Replicas[0].ID = 99
	if d := Default(); d.Sites[0] != "site0" || d.Replicas[0].ID != 1 {
		t.Error("Default shares slices between calls")
	}
}

func TestZipfSkewRange(t *testing.T) {
	for _, skew := range []float64{0, 0.6, 0.99, 1, 1.2, 2} {
		c := Default()
		c.Bench.ZipfSkew = skew
		if err := c.Validate(); err != nil {
			t.Errorf("skew %v: %v", skew, err)
		}
	}
}

func TestValidateReportsFieldPath(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string // the whole message of the single expected error
	}{
		{"protocol", func(c *Config) { c.Protocol = "paxos" },
			`protocol: "paxos" is not one of curp, curp-ht, curp-ho, raft, raft-ht, mongo, pileus, pileus-ht, epaxos, epaxos-ho`},
		{"empty site", func(c *Config) { c.Sites = append(c.Sites, "") },
			"sites[3]: empty name"},
		{"duplicate site", func(c *Config) { c.Sites = append(c.Sites, "site1") },
			`sites[3]: duplicate site "site1"`},
		{"even replicas", func(c *Config) { c.Replicas = c.Replicas[:2] },
			"replicas: have 2, need an odd number, at least 3"},
		{"one replica", func(c *Config) { c.Replicas = c.Replicas[:1] },
			"replicas: have 1, need an odd number, at least 3"},
		{"zero id", func(c *Config) { c.Replicas[1].ID = 0 },
			"replicas[1].id: 0 is not in [1, 4294967295]"},
		{"client-range id", func(c *Config) { c.Replicas[1].ID = 1 << 32 },
			"replicas[1].id: 4294967296 is not in [1, 4294967295]"},
		{"duplicate id", func(c *Config) { c.Replicas[2].ID = 1 },
			"replicas[2].id: duplicate id 1"},
		{"missing addr", func(c *Config) { c.Replicas[1].Addr = "" },
			"replicas[1].addr: missing"},
		{"duplicate addr", func(c *Config) { c.Replicas[2].Addr = c.Replicas[0].Addr },
			`replicas[2].addr: duplicate address "127.0.0.1:7001"`},
		{"addr without port", func(c *Config) { c.Replicas[0].Addr = "localhost" },
			`replicas[0].addr: "localhost" is not host:port`},
		{"addr bad port", func(c *Config) { c.Replicas[0].Addr = "localhost:http" },
			`replicas[0].addr: "localhost:http" has no valid port`},
		{"addr port 0", func(c *Config) { c.Replicas[0].Addr = "localhost:0" },
			`replicas[0].addr: "localhost:0" has no valid port`},
		{"replica site missing", func(c *Config) { c.Replicas[2].Site = "" },
			"replicas[2].site: missing"},
		{"replica site unknown", func(c *Config) { c.Replicas[2].Site = "mars" },
			`replicas[2].site: unknown site "mars"`},
		{"no clients", func(c *Config) { c.Clients.Sites = nil },
			"clients.sites: missing"},
		{"client site unknown", func(c *Config) { c.Clients.Sites[1] = "mars" },
			`clients.sites[1]: unknown site "mars"`},
		{"threads", func(c *Config) { c.Clients.Threads = 0 },
			"clients.threads: 0 is less than 1"},
		{"one way negative", func(c *Config) { c.Network.OneWayMs = -1 },
			"network.one_way_ms: -1 is not a finite number ≥ 0"},
		{"one way NaN", func(c *Config) { c.Network.OneWayMs = math.NaN() },
			"network.one_way_ms: NaN is not a finite number ≥ 0"},
		{"one way Inf", func(c *Config) { c.Network.OneWayMs = math.Inf(1) },
			"network.one_way_ms: +Inf is not a finite number ≥ 0"},
		{"jitter", func(c *Config) { c.Network.JitterMs = -0.5 },
			"network.jitter_ms: -0.5 is not a finite number ≥ 0"},
		{"flush delay", func(c *Config) { c.Network.FlushDelayUs = -1 },
			"network.flush_delay_us: -1 is less than 0"},
		{"matrix from", func(c *Config) { c.Network.Matrix = map[string]map[string]float64{"mars": {}} },
			`network.matrix.mars: unknown site "mars"`},
		{"matrix to", func(c *Config) {
			c.Network.Matrix = map[string]map[string]float64{"site0": {"site1": 3, "mars": 1}}
		}, `network.matrix.site0.mars: unknown site "mars"`},
		{"matrix negative", func(c *Config) {
			c.Network.Matrix = map[string]map[string]float64{"site0": {"site1": -3}}
		}, "network.matrix.site0.site1: -3 is not a finite number ≥ 0"},
		{"matrix diagonal", func(c *Config) {
			c.Network.Matrix = map[string]map[string]float64{"site0": {"site0": 1}}
		}, "network.matrix.site0.site0: 1 ms, but a site is 0 ms from itself"},
		{"tick", func(c *Config) { c.Raft.TickMs = 0 },
			"raft.tick_ms: 0 is less than 1"},
		{"heartbeat", func(c *Config) { c.Raft.HeartbeatTicks = 0; c.Raft.ElectionTicks = 5 },
			"raft.heartbeat_ticks: 0 is less than 1"},
		{"election", func(c *Config) { c.Raft.ElectionTicks = 1 },
			"raft.election_ticks: 1 must exceed raft.heartbeat_ticks (5)"},
		{"batch delay", func(c *Config) { c.Raft.BatchDelayUs = -5 },
			"raft.batch_delay_us: -5 is less than 0"},
		{"max batch", func(c *Config) { c.Raft.MaxBatch = 0 },
			"raft.max_batch: 0 is less than 1"},
		{"session expiry", func(c *Config) { c.Raft.SessionExpiryS = 99 },
			"raft.session_expiry_s: 99 is less than ten times client.timeout_ms (10000 ms): " +
				"a client may retry an operation after its session expired"},
		{"retry", func(c *Config) { c.Client.RetryMs = 0 },
			"client.retry_ms: 0 is less than 1"},
		{"timeout", func(c *Config) { c.Client.TimeoutMs = 100 },
			"client.timeout_ms: 100 is less than client.retry_ms (500)"},
		{"reqs", func(c *Config) { c.Bench.Reqs = -1 },
			"bench.reqs: -1 is less than 0"},
		{"no duration", func(c *Config) { c.Bench.DurationS = 0 },
			"bench.duration_s: must be positive when bench.reqs is 0"},
		{"negative duration", func(c *Config) { c.Bench.DurationS = -1; c.Bench.Reqs = 10 },
			"bench.duration_s: -1 is not a finite number ≥ 0"},
		{"warmup", func(c *Config) { c.Bench.WarmupS = -1 },
			"bench.warmup_s: -1 is not a finite number ≥ 0"},
		{"pendings", func(c *Config) { c.Bench.Pendings = 0 },
			"bench.pendings: 0 is less than 1"},
		{"writes", func(c *Config) { c.Bench.Writes = -1 },
			"bench.writes: -1 is not a percentage"},
		{"weak ratio", func(c *Config) { c.Bench.WeakRatio = 120 },
			"bench.weak_ratio: 120 is not a percentage"},
		{"weak writes", func(c *Config) { c.Bench.WeakWrites = 101 },
			"bench.weak_writes: 101 is not a percentage"},
		{"conflicts", func(c *Config) { c.Bench.Conflicts = 200 },
			"bench.conflicts: 200 is not a percentage"},
		{"key space", func(c *Config) { c.Bench.KeySpace = 0 },
			"bench.key_space: 0 is less than 1"},
		{"zipf above two", func(c *Config) { c.Bench.ZipfSkew = 2.5 },
			"bench.zipf_skew: 2.5 is not in [0, 2]"},
		{"zipf negative", func(c *Config) { c.Bench.ZipfSkew = -0.1 },
			"bench.zipf_skew: -0.1 is not in [0, 2]"},
		{"zipf NaN", func(c *Config) { c.Bench.ZipfSkew = math.NaN() },
			"bench.zipf_skew: NaN is not in [0, 2]"},
		{"ycsb", func(c *Config) { c.Bench.YCSB = "g" },
			`bench.ycsb: "g" is not one of a, b, c, d, e, f`},
		{"ycsb weak", func(c *Config) { c.Bench.YCSB, c.Bench.YCSBWeak = "e", []string{"scan", "delete"} },
			`bench.ycsb_weak: "delete" is not one of read, update, insert, rmw, scan`},
		{"mix", func(c *Config) { c.Bench.Mix = "linkbench" },
			`bench.mix: "linkbench" is not one of tao`},
		{"mix and ycsb", func(c *Config) { c.Bench.Mix, c.Bench.YCSB = "tao", "e" },
			`bench.mix: "tao" and bench.ycsb "e" both choose the kinds of operations: set one`},
		{"mix and ycsb weak", func(c *Config) { c.Bench.Mix, c.Bench.YCSBWeak = "tao", []string{"read"} },
			`bench.mix: "tao" fixes every operation's level: bench.ycsb_weak does not apply`},
		{"command size small", func(c *Config) { c.Bench.CommandSize = 15 },
			"bench.command_size: 15 is not in [16, 1048576]"},
		{"command size large", func(c *Config) { c.Bench.CommandSize = 1<<20 + 1 },
			"bench.command_size: 1048577 is not in [16, 1048576]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			errs := fieldErrors(t, c.Validate())
			if len(errs) != 1 || errs[0].Error() != tt.want {
				t.Fatalf("Validate() = %q, want exactly %q", errs, tt.want)
			}
			checkPath(t, errs[0].Path)
		})
	}
}

// fieldErrors unpacks Validate's joined error, insisting every part is a
// *FieldError.
func fieldErrors(t *testing.T, err error) []*FieldError {
	t.Helper()
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("Validate error %v is not a joined error", err)
	}
	var out []*FieldError
	for _, e := range joined.Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("error %v is not a *FieldError", e)
		}
		out = append(out, fe)
	}
	return out
}

var pathPart = regexp.MustCompile(`^([a-z_0-9]+)((?:\[\d+\])?)$`)

// checkPath makes sure an error path names a real key of the YAML document,
// by walking Config's yaml tags; map keys (network.matrix.a.b) are free.
func checkPath(t *testing.T, path string) {
	t.Helper()
	typ := reflect.TypeFor[Config]()
	for _, part := range strings.Split(path, ".") {
		if typ.Kind() == reflect.Map {
			typ = typ.Elem()
			continue
		}
		m := pathPart.FindStringSubmatch(part)
		if m == nil || typ.Kind() != reflect.Struct {
			t.Fatalf("path %q: cannot resolve %q", path, part)
		}
		found := false
		for f := range typ.Fields() {
			if strings.Split(f.Tag.Get("yaml"), ",")[0] == m[1] {
				typ, found = f.Type, true
				break
			}
		}
		if !found {
			t.Fatalf("path %q: %v has no yaml key %q", path, typ, m[1])
		}
		if m[2] != "" {
			if typ.Kind() != reflect.Slice {
				t.Fatalf("path %q: %q is not a list", path, m[1])
			}
			typ = typ.Elem()
		}
	}
}

func TestValidateReportsEveryError(t *testing.T) {
	c := Default()
	c.Protocol = "x"
	c.Replicas[1].Addr = ""
	c.Bench.WeakRatio = 120
	errs := fieldErrors(t, c.Validate())
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	want := []string{"protocol", "replicas[1].addr", "bench.weak_ratio"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("error paths = %v, want %v", paths, want)
	}

	// The zero Config is not the default: every required field complains.
	c = Config{}
	paths = nil
	for _, e := range fieldErrors(t, c.Validate()) {
		paths = append(paths, e.Path)
	}
	want = []string{"protocol", "sites", "replicas", "clients.sites", "clients.threads",
		"raft.tick_ms", "raft.heartbeat_ticks", "raft.election_ticks", "raft.max_batch",
		"client.retry_ms", "bench.duration_s", "bench.pendings", "bench.key_space",
		"bench.command_size"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("zero Config error paths = %v, want %v", paths, want)
	}
}

func TestParseReportsFieldPath(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"addr", `
replicas:
  - {id: 1, addr: "h:1", site: site0}
  - {id: 2, site: site1}
  - {id: 3, addr: "h:3", site: site2}
`, "replicas[1].addr: missing"},
		{"weak ratio", "bench: {weak_ratio: 120}", "bench.weak_ratio: 120 is not a percentage"},
		{"matrix", "network: {matrix: {site1: {moon: 3}}}", `network.matrix.site1.moon: unknown site "moon"`},
		{"derived replicas", "sites: [a, b]", "replicas: have 2, need an odd number, at least 3"},
		{"yaml nan", "network: {one_way_ms: .nan}", "network.one_way_ms: NaN is not a finite number ≥ 0"},
		{"protocol", "protocol: RAFT", `protocol: "RAFT" is not one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseRejectsBadDocuments(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown top-level field", "protocl: raft", "protocl"},
		{"unknown nested field", "bench:\n  weak_ration: 30\n", "weak_ration"},
		{"unknown replica field", "replicas: [{id: 1, port: 3}]", "port"},
		{"wrong type", "bench: {reqs: many}", "many"},
		{"negative unsigned", "bench: {key_space: -1}", "-1"},
		{"second document", "protocol: raft\n---\nprotocol: curp\n", "more than one YAML document"},
		{"broken second document", "protocol: raft\n---\n[\n", "yaml"},
		{"not a mapping", "- curp\n", "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestPartialDocumentKeepsDefaults(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want func(c *Config)
	}{
		{"empty", "", func(*Config) {}},
		{"comment only", "# nothing\n", func(*Config) {}},
		{"one bench field", "bench:\n  weak_ratio: 30\n", func(c *Config) { c.Bench.WeakRatio = 30 }},
		{"a mix", "bench: {mix: tao, key_space: 100000, zipf_skew: 0.8}", func(c *Config) {
			c.Bench.Mix, c.Bench.KeySpace, c.Bench.ZipfSkew = "tao", 100_000, 0.8
		}},
		{"emulation off keeps delays", "network: {emulate: false}", func(c *Config) { c.Network.Emulate = false }},
		{"null section", "network: null\nbench: ~\n", func(*Config) {}},
		{"protocol", "protocol: curp-ht", func(c *Config) { c.Protocol = ProtocolCURPHT }},
		{"five sites derive replicas and clients", "sites: [a, b, c, d, e]", func(c *Config) {
			c.Sites = []string{"a", "b", "c", "d", "e"}
			c.Replicas = nil
			c.Clients.Sites = nil
			for i, s := range c.Sites {
				c.Replicas = append(c.Replicas, Replica{
					ID: uint64(i + 1), Addr: "127.0.0.1:" + strconv.Itoa(7001+i), Site: s})
			}
			c.Clients.Sites = c.Sites
		}},
		{"clients follow listed replicas", `
replicas:
  - {id: 7, addr: "h:1", site: site2}
  - {id: 8, addr: "h:2", site: site2}
  - {id: 9, addr: "h:3", site: site0}
`, func(c *Config) {
			c.Replicas = []Replica{{ID: 7, Addr: "h:1", Site: "site2"}, {ID: 8, Addr: "h:2", Site: "site2"}, {ID: 9, Addr: "h:3", Site: "site0"}}
			c.Clients.Sites = []string{"site2", "site0"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Parse(%q)\n got %+v\nwant %+v", tt.yaml, got, want)
			}
		})
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	example, err := Load(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	odd := Default()
	// Site names YAML would otherwise read as a bool, a number and null.
	odd.Sites = []string{"yes", "1", "null"}
	odd.Replicas = nil
	odd.Clients.Sites = nil
	odd.FillDerived()
	odd.Network.Matrix = map[string]map[string]float64{"yes": {"1": 0.1, "null": 1e-3}, "null": {}}
	odd.Network.OneWayMs = 1.0 / 3
	odd.Bench.Seed = math.MaxUint64
	odd.Bench.Reqs = 10_000
	odd.Bench.DurationS = 0
	odd.Bench.ZipfSkew = 0
	odd.Network.Emulate = false
	if err := odd.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{"default": Default(), "example": example, "odd": odd} {
		t.Run(name, func(t *testing.T) {
			data, err := c.YAML()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(YAML()) = %v\n%s", err, data)
			}
			if !reflect.DeepEqual(got, c) {
				t.Fatalf("round trip changed the config\n got %+v\nwant %+v\n%s", got, c, data)
			}
		})
	}
}

func TestYAMLNamesEveryField(t *testing.T) {
	data, err := Default().YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"protocol:", "one_way_ms:", "emulate: true", "election_ticks:",
		"retry_ms:", "weak_ratio: 50", "zipf_skew: 0.99", "seed: 1", "threads: 2"} {
		if !strings.Contains(string(data), key) {
			t.Errorf("YAML output lacks %q:\n%s", key, data)
		}
	}
}

func TestLoadExample(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Protocol != ProtocolCURPHO || len(c.Replicas) != 5 || c.Clients.Threads != 16 {
		t.Errorf("example: %+v", c)
	}
	if c.Superquorum() != 4 || c.Majority() != 3 {
		t.Errorf("example quorums: super %d majority %d", c.Superquorum(), c.Majority())
	}
	// Fields the file leaves out keep their defaults.
	def := Default()
	if c.Raft.TickMs != def.Raft.TickMs || c.Bench.CommandSize != def.Bench.CommandSize ||
		!c.Network.Emulate || c.Client != def.Client {
		t.Errorf("example lost defaults: %+v", c)
	}
	if c.Raft.BatchDelay() != 150*time.Microsecond || c.Bench.Duration() != 30*time.Second {
		t.Errorf("example durations: batch %v bench %v", c.Raft.BatchDelay(), c.Bench.Duration())
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want not-exist", err)
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("bench: {pendings: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "bench.pendings") {
		t.Errorf("Load(bad) = %v, want the file and the field named", err)
	}
}

func TestOneWay(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	idx := func(s string) uint32 {
		i, ok := c.SiteIndex(s)
		if !ok {
			t.Fatalf("no site %q", s)
		}
		return i
	}
	d := c.OneWay()
	tests := []struct {
		from, to string
		want     time.Duration
	}{
		{"virginia", "virginia", 0},
		{"tokyo", "tokyo", 0},
		{"virginia", "oregon", ms(31)},
		{"oregon", "virginia", ms(31)}, // one direction given: symmetric
		{"tokyo", "oregon", ms(49)},
		{"ireland", "frankfurt", ms(12.5)}, // both directions given: each its own
		{"frankfurt", "ireland", ms(13)},
		{"tokyo", "virginia", ms(40)}, // not in the matrix: one_way_ms
		{"ireland", "tokyo", ms(40)},
	}
	for _, tt := range tests {
		if got := d[idx(tt.from)][idx(tt.to)]; got != tt.want {
			t.Errorf("OneWay %s→%s = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	if c.Network.Jitter() != 500*time.Microsecond {
		t.Errorf("Jitter = %v", c.Network.Jitter())
	}

	def := Default()
	for i, row := range def.OneWay() {
		for j, v := range row {
			if want := 25 * time.Millisecond * time.Duration(min(1, abs(i-j))); v != want {
				t.Errorf("default OneWay[%d][%d] = %v, want %v", i, j, v, want)
			}
		}
	}

	c.Network.Emulate = false
	d = c.OneWay()
	if len(d) != len(c.Sites) {
		t.Fatalf("OneWay has %d rows for %d sites", len(d), len(c.Sites))
	}
	for i, row := range d {
		if len(row) != len(c.Sites) {
			t.Fatalf("OneWay row %d has %d columns", i, len(row))
		}
		for j, v := range row {
			if v != 0 {
				t.Errorf("OneWay[%d][%d] = %v with emulation off", i, j, v)
			}
		}
	}
	if c.Network.Jitter() != 0 {
		t.Errorf("Jitter = %v with emulation off", c.Network.Jitter())
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestQuorums(t *testing.T) {
	tests := []struct{ n, f, majority, super int }{
		{3, 1, 2, 3},
		{5, 2, 3, 4},
		{7, 3, 4, 6},
		{9, 4, 5, 7},
	}
	for _, tt := range tests {
		c := Default()
		c.Replicas = make([]Replica, tt.n)
		if c.F() != tt.f || c.Majority() != tt.majority || c.Superquorum() != tt.super {
			t.Errorf("N=%d: F %d majority %d superquorum %d, want %d %d %d",
				tt.n, c.F(), c.Majority(), c.Superquorum(), tt.f, tt.majority, tt.super)
		}
	}
}

func TestSiteIndex(t *testing.T) {
	c := Default()
	for i, s := range c.Sites {
		if got, ok := c.SiteIndex(s); !ok || got != uint32(i) {
			t.Errorf("SiteIndex(%q) = %d, %v", s, got, ok)
		}
	}
	if _, ok := c.SiteIndex("mars"); ok {
		t.Error("SiteIndex found an unknown site")
	}
}

func TestDurationHelpers(t *testing.T) {
	c := Default()
	if c.Raft.Tick() != 10*time.Millisecond || c.Client.Retry() != 500*time.Millisecond ||
		c.Client.Timeout() != 10*time.Second || c.Bench.Warmup() != 3*time.Second ||
		c.Network.FlushDelay() != 0 {
		t.Errorf("duration helpers: tick %v retry %v timeout %v warmup %v flush %v",
			c.Raft.Tick(), c.Client.Retry(), c.Client.Timeout(), c.Bench.Warmup(), c.Network.FlushDelay())
	}
}

// TestCloneSharesNothing: every list and map of a clone is its own, so a
// run that draws addresses into its copy leaves the caller's as it was.
// Every such field must be set here: a field added later fails the test
// until it is (and Clone copies it).
func TestCloneSharesNothing(t *testing.T) {
	c := Default()
	c.Network.Matrix = map[string]map[string]float64{"site0": {"site1": 3}}
	c.Bench.YCSBWeak = []string{"read"}
	clone := c.Clone()
	if !reflect.DeepEqual(c, clone) {
		t.Fatalf("Clone() = %+v, want %+v", clone, c)
	}
	var walk func(path string, a, b reflect.Value)
	walk = func(path string, a, b reflect.Value) {
		switch a.Kind() {
		case reflect.Struct:
			for i := range a.NumField() {
				walk(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
			}
		case reflect.Slice, reflect.Map:
			if a.Len() == 0 {
				t.Fatalf("%s is empty: set it, so the test sees whether Clone copies it", path)
			}
			if a.UnsafePointer() == b.UnsafePointer() {
				t.Errorf("%s is shared between a config and its clone", path)
			}
			if a.Kind() == reflect.Map {
				for _, k := range a.MapKeys() {
					walk(path+"["+k.String()+"]", a.MapIndex(k), b.MapIndex(k))
				}
			}
		}
	}
	walk("Config", reflect.ValueOf(c), reflect.ValueOf(clone))
	clone.Replicas[0].Addr = "127.0.0.1:1"
	if c.Replicas[0].Addr == clone.Replicas[0].Addr {
		t.Error("an address set in the clone changed the original")
	}
}
