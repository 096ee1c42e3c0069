package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
)

func newGatewayCmd() *cobra.Command {
	var (
		flags    configFlags
		site     string
		listen   string
		insecure bool
		history  string
	)
	cmd := &cobra.Command{
		Use:   "gateway --config FILE --site SITE --listen ADDR",
		Short: "Serve etcd's v3 API (etcdctl, etcd clients, YCSB) for the clients at one site",
		Long: `Serve etcd's v3 KV API, Maintenance.Status and Cluster.MemberList on --listen,
as a client of the configured cluster at --site. Run one gateway beside each
site's replica and point etcd clients at it: a strong single-key put or read
takes the protocol's fast path, a serializable read the weak path to the
site's replica. See docs/etcd.md for what maps to what.

With a tls section in the configuration the gateway serves TLS with the
site replica's certificate and requires client certificates from the
cluster's CA; without one it listens only on a loopback address, unless
--insecure is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			if site == "" {
				site = cfg.Clients.Sites[0]
			}
			o := cluster.GatewayOptions{Listen: listen, Insecure: insecure}
			if history != "" {
				o.History = client.NewHistory()
			}
			g, err := cluster.StartGateway(&cfg, site, o, flags.logger().With("gateway", site))
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "etcd gateway for %s (%s) listening on %s\n", site, cfg.Protocol, g.Addr())
			<-ctx.Done()
			g.Stop()
			fmt.Fprint(cmd.OutOrStdout(), g.Served())
			if history != "" {
				if err := client.SaveHistory(o.History, history); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "history written to %s (check it with: hybridkv check --protocol %s %s)\n",
					history, cfg.Protocol, history)
			}
			return nil
		},
	}
	flags.register(cmd.Flags(), false)
	cmd.Flags().StringVar(&site, "site", "", "the site whose clients the gateway serves (default: the first client site)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:2379", "address etcd clients connect to")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "allow plain TCP on a non-loopback address")
	cmd.Flags().StringVar(&history, "history", "", "record every operation to this file on exit, for hybridkv check")
	return cmd
}
