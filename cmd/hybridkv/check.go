package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/bench"
	"github.com/hybridkv/hybridkv/internal/checker"
	"github.com/hybridkv/hybridkv/internal/guarantees"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/protocols"
)

func newCheckCmd() *cobra.Command {
	var (
		protocol  string
		claims    string
		ho        bool
		lost      bool
		visualize string
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check HISTORY",
		Short: "Check a recorded history for consistency violations",
		Long: `Check a history recorded by 'bench --check': linearizability of strong
operations and weak writes (S1), the session guarantees and causal visibility
(W1-W6), the hybrid guarantees (C1-C3), replica convergence (E1) and
exactly-once application (X1). Exits non-zero on any violation.

Only the guarantees the protocol claims are checked: --protocol takes the
claims of the protocol that recorded the history (bench names its histories
after it), --claims lists them (S1,W1,...; it replaces the protocol's list
when both are given). With neither, every guarantee is checked, and a strong
read may not see a weak write before it is committed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := checkOptions(protocol, claims, ho)
			if err != nil {
				return err
			}
			opts.Claims.WeakWritesMayBeLost = opts.Claims.WeakWritesMayBeLost || lost
			opts.VisualizePath, opts.LinearizabilityTimeout = visualize, timeout
			bench.LimitMemoryForCheck()
			f, err := history.ReadFile(args[0])
			if err != nil {
				return err
			}
			res := checker.Check(f, opts)
			out := cmd.OutOrStdout()
			for _, v := range res.Violations {
				fmt.Fprintln(out, v.String())
			}
			fmt.Fprintf(out, "%d operations, %d replica states, checked in %v\n",
				len(f.Events), len(f.Replicas), res.Duration.Round(time.Millisecond))
			fmt.Fprintln(out, res.Scope())
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
	cmd.Flags().StringVar(&protocol, "protocol", "", "check what this protocol claims: one of "+strings.Join(protocols.Names(), ", "))
	cmd.Flags().StringVar(&claims, "claims", "", "check these guarantees, comma-separated (S1,W1,W2,...; all for every one)")
	cmd.Flags().BoolVar(&lost, "weak-writes-may-be-lost", false,
		"acknowledged weak writes may be lost (a run with --weak-write-ack leader): owe them nothing")
	cmd.Flags().BoolVar(&ho, "curp-ho", false, "the same as --protocol curp-ho")
	if err := cmd.Flags().MarkDeprecated("curp-ho", "use --protocol curp-ho"); err != nil {
		panic(err)
	}
	cmd.Flags().StringVar(&visualize, "visualize", "", "write an HTML visualization of linearizability failures here")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "bound on the visualization's search")
	return cmd
}

// checkOptions are the checker's options for the check command's flags:
// the protocol's claims, with the claimed set replaced by claims when it
// is given. ho is the deprecated --curp-ho.
func checkOptions(protocol, claims string, ho bool) (checker.Options, error) {
	if ho {
		if protocol != "" && protocol != "curp-ho" {
			return checker.Options{}, fmt.Errorf("--curp-ho contradicts --protocol %s", protocol)
		}
		protocol = "curp-ho"
	}
	var opts checker.Options
	if protocol != "" {
		var err error
		if opts, err = protocols.CheckOptions(protocol); err != nil {
			return checker.Options{}, err
		}
	}
	if claims != "" {
		set, err := guarantees.Parse(claims)
		if err != nil {
			return checker.Options{}, err
		}
		if set == 0 {
			return checker.Options{}, errors.New("--claims names no guarantee")
		}
		opts.Claims.Set = set
	}
	return opts, nil
}
