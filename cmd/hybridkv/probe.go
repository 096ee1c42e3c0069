package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/probe"
)

// newProbeCmd is the machine probe that bench --machine-probe runs beside
// a benchmark; it is hidden as it is bench's helper, not a user's command.
func newProbeCmd() *cobra.Command {
	var interval time.Duration
	cmd := &cobra.Command{
		Use:    "probe",
		Short:  "Measure the machine's memory and core speed until standard input closes",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithCancel(ctx)
			// The probe ends with whoever started it: its standard input
			// closes when the parent exits, however it exits.
			go func() {
				_, _ = io.Copy(io.Discard, cmd.InOrStdin())
				cancel()
			}()
			return probe.Run(ctx, probe.Config{Interval: interval, LowestPriority: true}, cmd.OutOrStdout())
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "how often to print a sample")
	return cmd
}
