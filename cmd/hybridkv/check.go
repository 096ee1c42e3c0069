package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/history"
)

func newCheckCmd() *cobra.Command {
	var (
		ho        bool
		visualize string
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check HISTORY",
		Short: "Check a recorded history for consistency violations",
		Long: `Check a history recorded by 'bench --check': linearizability of strong
operations and weak writes (S1), the session guarantees and causal visibility
(W1-W6), the hybrid guarantees (C1-C3), replica convergence (E1) and
exactly-once application (X1). Exits non-zero on any violation.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := history.ReadFile(args[0])
			if err != nil {
				return err
			}
			res := checker.Check(f, checker.Options{HOEarlyVisibility: ho, VisualizePath: visualize,
				LinearizabilityTimeout: timeout})
			out := cmd.OutOrStdout()
			for _, v := range res.Violations {
				fmt.Fprintln(out, v.String())
			}
			fmt.Fprintf(out, "%d operations, %d replica states, checked in %v\n",
				len(f.Events), len(f.Replicas), res.Duration.Round(time.Millisecond))
			switch {
			case res.Err != nil:
				return fmt.Errorf("history cannot be checked: %w", res.Err)
			case !res.Clean():
				return fmt.Errorf("%d violations (%v more omitted)", len(res.Violations), res.Omitted)
			}
			fmt.Fprintln(out, "clean")
			return nil
		},
	}
	cmd.Flags().BoolVar(&ho, "curp-ho", false, "allow CURP-HO's early visibility of weak writes to strong reads")
	cmd.Flags().StringVar(&visualize, "visualize", "", "write an HTML visualization of linearizability failures here")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "bound on the visualization's search")
	return cmd
}
