package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/cluster"
)

func newServerCmd() *cobra.Command {
	var (
		flags     configFlags
		id        uint64
		debug     string
		dataDir   string
		bootstrap bool
		insecure  bool
	)
	cmd := &cobra.Command{
		Use:   "server --config FILE --id N",
		Short: "Run one replica of a configured cluster",
		Long: `Run one replica. Every replica of a deployment gets the same configuration
file and its own --id; clients find the replicas through the same file.

The replica keeps its raft log, hard state and snapshots in its data
directory and resumes from them when restarted. A blank data directory starts
a new cluster only with --bootstrap (give it to every replica on the first
start); without it the replica refuses to start, since a replica that lost
its disk must not rejoin as if it had never voted. A data directory that
holds state is always resumed from, so restarting with the first start's
command line is safe.

Every link uses mutual TLS when the configuration has a tls section (see
hybridkv certs). Without it a replica listens only on a loopback address,
unless --insecure is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			logger := flags.logger().With("replica", id)
			srv, err := cluster.NewServer(&cfg, id, cluster.ServerOptions{DataDir: dataDir, Bootstrap: bootstrap, Insecure: insecure}, logger)
			if err != nil {
				return err
			}
			if debug != "" {
				go func() { logger.Warn("debug server", "err", http.ListenAndServe(debug, srv.DebugHandler())) }()
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "replica %d (%s) listening on %s\n", id, cfg.Protocol, srv.Transport().Addr())
			return srv.Run(ctx)
		},
	}
	flags.register(cmd.Flags(), false)
	cmd.Flags().Uint64Var(&id, "id", 0, "this replica's id in the configuration (required)")
	cmd.Flags().StringVar(&debug, "debug-addr", "", "serve /status (JSON), /metrics (Prometheus), /faults (fault injection, loopback callers only) and /debug/pprof/ on this address")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "directory for the replica's raft log and snapshots (default: the configuration's data_dir, or hybridkv-data/replica-<id>)")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "allow plain TCP on a non-loopback address (anyone who reaches it can speak for a replica)")
	cmd.Flags().BoolVar(&bootstrap, "bootstrap", false, "start a new cluster if the data directory is blank (ignored when it holds state)")
	_ = cmd.MarkFlagRequired("id")
	return cmd
}
