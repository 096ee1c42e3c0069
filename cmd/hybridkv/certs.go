package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/hybridkv/hybridkv/internal/certs"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
)

func newCertsCmd() *cobra.Command {
	var (
		flags    configFlags
		out      string
		validity time.Duration
	)
	cmd := &cobra.Command{
		Use:   "certs --config FILE --out DIR",
		Short: "Generate a CA and certificates for every replica and client site of a configuration",
		Long: `Generate the certificates of a deployment's mutual TLS: a CA, one
certificate per replica (naming its id and the host of its address) and one
per client site, ECDSA P-256. It prints the tls section to put in the
configuration; copy DIR (or each machine's own files and ca.pem) to the
machines. Keep ca-key.pem off them: it can issue more certificates.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			layout := certs.Layout{Dir: out}
			var replicas []certs.Replica
			for _, r := range cfg.Replicas {
				replicas = append(replicas, certs.Replica{ID: r.ID, Addr: r.Addr})
			}
			if err := layout.Generate(replicas, cfg.Sites, validity); err != nil {
				return err
			}
			section, err := yaml.Marshal(struct {
				TLS config.TLSFiles `yaml:"tls"`
			}{cluster.TLSFilesFor(layout)})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote a CA, %d replica and %d client-site certificates to %s; add to the configuration:\n\n%s",
				len(replicas), len(cfg.Sites), out, section)
			return nil
		},
	}
	flags.register(cmd.Flags(), false)
	cmd.Flags().StringVar(&out, "out", "certs", "directory for the CA, certificates and keys")
	cmd.Flags().DurationVar(&validity, "validity", 365*24*time.Hour, "how long the certificates are valid")
	return cmd
}
