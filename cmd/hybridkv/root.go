package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
	"github.com/hybridkv/hybridkv/internal/workload"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "hybridkv",
		Short: "A geo-replicated key-value store with per-operation consistency",
		Long: `hybridkv is a geo-replicated key-value store in which every operation chooses
its consistency: strong (linearizable) or weak (causal). It runs CURP-family
protocols on a raft log, emulates wide-area latency, and benchmarks them.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newBenchCmd(), newClusterCmd(), newServerCmd(), newConfigCmd(), newGetCmd(), newPutCmd(), newDelCmd(), newCheckCmd(), newCertsCmd(), newProbeCmd(), newGatewayCmd(), newExperimentCmd())
	return root
}

// configFlags are the command-line overrides of the configuration file.
// Only flags the user set override the file (or the defaults).
type configFlags struct {
	file     string
	protocol string
	// protocolList: --protocol names several protocols for the caller to
	// run in turn, rather than setting the configuration's.
	protocolList bool
	replicas     int
	delayMs      float64
	jitterMs     float64
	emulate      bool
	fsync        bool
	tls          config.TLSFiles
	threads      int
	batchUs      int
	flushUs      int
	syncUs       int
	verbose      bool
	bench        bool
	reqs         int
	durationS    float64
	warmupS      float64
	pendings     int
	writes       int
	weakRatio    int
	weakWrites   int
	conflicts    int
	keys         uint64
	zipf         float64
	commandSize  int
	seed         uint64
	preload      bool
	weakWriteAck string
	ycsb         string
	ycsbWeak     []string
	mix          string
}

// mixFixes are the flags a mix (--mix, bench.mix) takes the place of: it
// fixes every operation's kind and level itself.
var mixFixes = []string{"writes", "weak-ratio", "weak-writes", "ycsb", "ycsb-weak"}

func (f *configFlags) register(fs *pflag.FlagSet, bench bool) {
	f.bench = bench
	fs.StringVarP(&f.file, "config", "c", "", "YAML configuration file (defaults are used for what it leaves out)")
	if f.protocolList {
		fs.StringVar(&f.protocol, "protocol", "", "protocols to run, comma-separated, or all ("+strings.Join(protocols.Names(), ", ")+
			"; default: "+strings.Join(protocols.DefaultNames(), ", ")+", or the configuration file's)")
	} else {
		fs.StringVar(&f.protocol, "protocol", "", "protocol: one of "+strings.Join(protocols.Names(), ", ")+" (default: from the configuration)")
	}
	fs.IntVar(&f.replicas, "replicas", 0, "number of replicas, one per site, each site with a co-located client (default 3)")
	fs.Float64Var(&f.delayMs, "delay", 0, "one-way delay between sites in ms (default 25)")
	fs.Float64Var(&f.jitterMs, "jitter", 0, "uniform jitter added to each delay in ms (default 0)")
	fs.BoolVar(&f.emulate, "emulate", true, "emulate wide-area latency between sites")
	fs.StringVar(&f.tls.CA, "tls-ca", "", "CA certificate for mutual TLS (config tls.ca)")
	fs.StringVar(&f.tls.Cert, "tls-cert", "", "a replica's certificate, {id} for its id (config tls.cert)")
	fs.StringVar(&f.tls.Key, "tls-key", "", "a replica's key, {id} for its id (config tls.key)")
	fs.StringVar(&f.tls.ClientCert, "tls-client-cert", "", "a client's certificate, {site} for its site (config tls.client_cert)")
	fs.StringVar(&f.tls.ClientKey, "tls-client-key", "", "a client's key, {site} for its site (config tls.client_key)")
	fs.BoolVar(&f.fsync, "fsync", true, "sync the replicas' write-ahead logs before sending (off only for pure protocol benchmarks)")
	fs.IntVar(&f.batchUs, "batch-delay", 0, "leader batching delay in µs (default 100)")
	fs.IntVar(&f.flushUs, "flush-delay", 0, "per-connection write gathering delay in µs (default 0)")
	fs.IntVar(&f.syncUs, "sync-delay", 0, "how long a replica's busy disk writer gathers rounds before its next sync, in µs (default 500)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log protocol events to stderr")
	if !bench {
		return
	}
	fs.IntVar(&f.threads, "threads", 0, "sessions per client process (default 2)")
	fs.IntVar(&f.reqs, "reqs", 0, "operations per session; 0 runs for --duration instead")
	fs.Float64Var(&f.durationS, "duration", 0, "measured window in seconds (default 15)")
	fs.Float64Var(&f.warmupS, "warmup", 0, "warm-up before the measured window in seconds (default 3)")
	fs.IntVar(&f.pendings, "pendings", 0, "operations in flight per session (default 1)")
	fs.IntVar(&f.writes, "writes", 0, "percent of strong operations that are writes (default 10)")
	fs.IntVar(&f.weakRatio, "weak-ratio", 0, "percent of operations that are weak (default 50)")
	fs.IntVar(&f.weakWrites, "weak-writes", 0, "percent of weak operations that are writes (default 10)")
	fs.IntVar(&f.conflicts, "conflicts", 0, "percent of operations on one shared hot key (default 0)")
	fs.Uint64Var(&f.keys, "keys", 0, "key space (default 1000000)")
	fs.Float64Var(&f.zipf, "zipf", 0, fmt.Sprintf("Zipf skew theta in [0,%v]; 0 is uniform (default 0.99)", workload.MaxZipfSkew))
	fs.IntVar(&f.commandSize, "value-size", 0, "value size in bytes (default 100)")
	fs.Uint64Var(&f.seed, "seed", 0, "workload seed (default 1)")
	fs.StringVar(&f.weakWriteAck, "weak-write-ack", "", "when a weak write is answered: commit, or leader (once the leader logged it, before replication: "+
		"lost if it fails first; "+strings.Join(protocols.AckOnLogNames(), ", ")+") (default commit)")
	fs.StringVar(&f.ycsb, "ycsb", "", workload.YCSBHelp()+", in place of --writes and --weak-writes; --weak-ratio still sets the weak share")
	fs.StringSliceVar(&f.ycsbWeak, "ycsb-weak", nil, "with --ycsb, the kinds of operations that may be weak: "+
		strings.Join(workload.YCSBKinds(), ", ")+"; the others run strong (default all)")
	fs.StringVar(&f.mix, "mix", "", workload.MixHelp()+"; in place of --"+strings.Join(mixFixes, ", --")+
		", which it refuses; --keys, --zipf and --conflicts still choose the keys")
	fs.BoolVar(&f.preload, "preload", false, "write every key once before the run, so the store holds its whole key space from the start")
}

// load builds the configuration: defaults, then the file, then set flags.
func (f *configFlags) load(fs *pflag.FlagSet) (config.Config, error) {
	cfg := config.Default()
	if f.file != "" {
		var err error
		if cfg, err = config.Load(f.file); err != nil {
			return cfg, err
		}
	}
	f.overlay(fs, &cfg)
	if err := f.checkMix(fs, &cfg); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("invalid configuration: %w", err)
	}
	return cfg, nil
}

// overlay sets in cfg what the flags set on the command line say.
func (f *configFlags) overlay(fs *pflag.FlagSet, cfg *config.Config) {
	set := func(name string, apply func()) {
		if fs.Changed(name) {
			apply()
		}
	}
	if !f.protocolList {
		set("protocol", func() { cfg.Protocol = f.protocol })
	}
	set("replicas", func() { cfg.Resize(f.replicas) })
	set("delay", func() { cfg.Network.OneWayMs = f.delayMs })
	set("jitter", func() { cfg.Network.JitterMs = f.jitterMs })
	set("emulate", func() { cfg.Network.Emulate = f.emulate })
	set("fsync", func() { cfg.Storage.Fsync = f.fsync })
	set("tls-ca", func() { cfg.TLS.CA = f.tls.CA })
	set("tls-cert", func() { cfg.TLS.Cert = f.tls.Cert })
	set("tls-key", func() { cfg.TLS.Key = f.tls.Key })
	set("tls-client-cert", func() { cfg.TLS.ClientCert = f.tls.ClientCert })
	set("tls-client-key", func() { cfg.TLS.ClientKey = f.tls.ClientKey })
	set("batch-delay", func() { cfg.Raft.BatchDelayUs = f.batchUs })
	set("flush-delay", func() { cfg.Network.FlushDelayUs = f.flushUs })
	set("sync-delay", func() { cfg.Storage.SyncDelayUs = f.syncUs })
	if f.bench {
		b := &cfg.Bench
		set("threads", func() { cfg.Clients.Threads = f.threads })
		set("reqs", func() { b.Reqs = f.reqs })
		set("duration", func() { b.DurationS = f.durationS })
		set("warmup", func() { b.WarmupS = f.warmupS })
		set("pendings", func() { b.Pendings = f.pendings })
		set("writes", func() { b.Writes = f.writes })
		set("weak-ratio", func() { b.WeakRatio = f.weakRatio })
		set("weak-writes", func() { b.WeakWrites = f.weakWrites })
		set("conflicts", func() { b.Conflicts = f.conflicts })
		set("keys", func() { b.KeySpace = f.keys })
		set("preload", func() { b.Preload = f.preload })
		set("zipf", func() { b.ZipfSkew = f.zipf })
		set("value-size", func() { b.CommandSize = f.commandSize })
		set("seed", func() { b.Seed = f.seed })
		set("weak-write-ack", func() { cfg.Client.WeakWriteAck = f.weakWriteAck })
		set("ycsb", func() { b.YCSB = f.ycsb })
		set("ycsb-weak", func() { b.YCSBWeak = f.ycsbWeak })
		set("mix", func() { b.Mix = f.mix })
	}
}

// checkMix refuses a flag that sets what the configuration's mix fixes:
// the run would silently not do what it says.
func (f *configFlags) checkMix(fs *pflag.FlagSet, cfg *config.Config) error {
	if !f.bench || cfg.Bench.Mix == "" {
		return nil
	}
	for _, name := range mixFixes {
		if fs.Changed(name) {
			return fmt.Errorf("--%s: the %s mix fixes every operation's kind and level; drop --%s or the mix", name, cfg.Bench.Mix, name)
		}
	}
	return nil
}

func (f *configFlags) logger() *slog.Logger {
	if !f.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
