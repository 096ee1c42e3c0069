package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
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
		admin    string
		useTLS   bool
	)
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start a local cluster, one process per replica, until Ctrl-C",
		Long: `Start every replica of the configuration as a separate process on this
machine, with wide-area latency emulated between sites, and stop them all on
Ctrl-C or after --duration. The configuration the replicas run is written to
the work directory, so clients can use it with --config. Each replica keeps
its data in <dir>/data/replica-N: a replica whose data directory exists
resumes from it, so running the command again on the same --dir restarts the
cluster with its data (remove the directory for a new one).

--admin serves, on a loopback address, an endpoint to crash and restart
replicas while the cluster runs:
  curl ADDR/replicas                      list the processes
  curl -X POST ADDR/replicas/2/kill       SIGKILL replica 2 (a crash)
  curl -X POST ADDR/replicas/2/stop       SIGTERM replica 2
  curl -X POST ADDR/replicas/2/restart    start replica 2 again on its data
  curl -X POST ADDR/replicas/2/pause      SIGSTOP replica 2 (resume: SIGCONT)
Each replica also serves /faults on its debug address (see docs/operating.md) to
cut, slow or thin out its links.`,
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
			if useTLS {
				if err := cluster.GenerateTLS(&cfg, filepath.Join(dir, "certs")); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			procs, err := cluster.Spawn(ctx, self, &cfg, dir)
			if err != nil {
				return err
			}
			defer procs.Stop()
			out := cmd.OutOrStdout()
			for i, p := range procs.List() {
				r := cfg.Replicas[i]
				fmt.Fprintf(out, "replica %d at %s (site %s), pid %d, data %s, log %s\n",
					r.ID, r.Addr, r.Site, p.Cmd.Process.Pid, p.DataDir, p.Log)
			}
			if admin != "" {
				if err := serveAdmin(ctx, admin, procs); err != nil {
					return err
				}
				fmt.Fprintf(out, "admin endpoint on http://%s/replicas (kill, stop, restart, pause, resume: POST /replicas/N/ACTION)\n", admin)
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
	cmd.Flags().StringVar(&dir, "dir", filepath.Join(os.TempDir(), "hybridkv-cluster"), "work directory for logs, data and the configuration")
	cmd.Flags().BoolVar(&useTLS, "tls", false, "generate certificates in <dir>/certs and use mutual TLS on every link")
	cmd.Flags().StringVar(&admin, "admin", "", "serve the admin endpoint (kill, stop, restart, pause, resume replicas) on this loopback address, e.g. 127.0.0.1:7100")
	return cmd
}

// serveAdmin serves the cluster's admin endpoint until ctx ends. It only
// listens on loopback: it can kill the replicas.
func serveAdmin(ctx context.Context, addr string, procs *cluster.Processes) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--admin: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--admin %s: the admin endpoint listens on loopback addresses only", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: procs.AdminHandler(ctx)}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() { _ = srv.Serve(l) }()
	return nil
}
