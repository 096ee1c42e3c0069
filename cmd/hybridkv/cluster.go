package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/cluster"
)

func newClusterCmd() *cobra.Command {
	var (
		flags    configFlags
		duration time.Duration
		dir      string
	)
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start a local cluster, one process per replica, until Ctrl-C",
		Long: `Start every replica of the configuration as a separate process on this
machine, with wide-area latency emulated between sites, and stop them all on
Ctrl-C or after --duration. The configuration the replicas run is written to
the work directory, so clients can use it with --config.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			procs, err := cluster.Spawn(ctx, self, &cfg, dir)
			if err != nil {
				return err
			}
			defer procs.Stop()
			out := cmd.OutOrStdout()
			for i, r := range cfg.Replicas {
				fmt.Fprintf(out, "replica %d at %s (site %s), pid %d, log %s\n",
					r.ID, r.Addr, r.Site, procs.Procs[i].Cmd.Process.Pid, procs.Procs[i].Log)
			}
			fmt.Fprintf(out, "%s cluster running; configuration in %s; Ctrl-C stops it\n",
				cfg.Protocol, filepath.Join(dir, "cluster.yaml"))
			if duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			<-ctx.Done()
			fmt.Fprintln(out, "stopping")
			return nil
		},
	}
	flags.register(cmd.Flags(), false)
	cmd.Flags().DurationVar(&duration, "duration", 0, "stop after this long (0: run until Ctrl-C)")
	cmd.Flags().StringVar(&dir, "dir", filepath.Join(os.TempDir(), "hybridkv-cluster"), "work directory for logs and the configuration")
	return cmd
}
