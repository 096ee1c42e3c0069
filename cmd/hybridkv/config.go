package main

import (
	"github.com/spf13/cobra"
)

func newConfigCmd() *cobra.Command {
	var flags configFlags
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (defaults, file and flags) as YAML",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			raw, err := cfg.YAML()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(raw)
			return err
		},
	}
	flags.register(cmd.Flags(), true)
	return cmd
}
