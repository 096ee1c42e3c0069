package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	_ "net/http/pprof" // profiling endpoints on --debug-addr
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/cluster"
)

func newServerCmd() *cobra.Command {
	var (
		flags configFlags
		id    uint64
		debug string
	)
	cmd := &cobra.Command{
		Use:   "server --config FILE --id N",
		Short: "Run one replica of a configured cluster",
		Long: `Run one replica. Every replica of a deployment gets the same configuration
file and its own --id; clients find the replicas through the same file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			logger := flags.logger().With("replica", id)
			srv, err := cluster.NewServer(&cfg, id, logger)
			if err != nil {
				return err
			}
			if debug != "" {
				http.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					_ = json.NewEncoder(w).Encode(srv.Status())
				})
				go func() { logger.Warn("debug server", "err", http.ListenAndServe(debug, nil)) }()
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "replica %d (%s) listening on %s\n", id, cfg.Protocol, srv.Transport().Addr())
			return srv.Run(ctx)
		},
	}
	flags.register(cmd.Flags(), false)
	cmd.Flags().Uint64Var(&id, "id", 0, "this replica's id in the configuration (required)")
	cmd.Flags().StringVar(&debug, "debug-addr", "", "serve /status (JSON) and net/http/pprof on this address")
	_ = cmd.MarkFlagRequired("id")
	return cmd
}
