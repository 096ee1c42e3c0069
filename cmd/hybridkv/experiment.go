package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/experiment"
	"github.com/hybridkv/hybridkv/internal/protocols"
)

func newExperimentCmd() *cobra.Command {
	var (
		flags    configFlags
		runs     int
		quick    bool
		out      string
		check    bool
		useTLS   bool
		external bool
		verbose  bool
	)
	flags.protocolList = true
	cmd := &cobra.Command{
		Use:   "experiment NAME|all",
		Short: "Run one of the evaluation's experiments, or all of them, and write its CSV, figure and summary",
		Long: `Run an experiment of the evaluation: every point (a protocol and a value of
the experiment's parameter) as a benchmark run, repeated --runs times with
the rounds alternating, then write NAME.csv (every run), NAME.png (each
metric against the parameter, error bars spanning the repeats) and NAME.md
(the commands, build, machine, tables, and the prototype's published numbers
beside ours) into --out/NAME.

Experiments: ` + strings.Join(experiment.Names(), ", ") + `; all runs every one.

An interrupted experiment resumes: run the same command again and only the
points without a result run. --quick runs fewer values with short windows,
for trying an experiment out. Flags such as --delay, --fsync or --duration
apply on top of the experiment's own settings; --protocol runs only the
listed protocols of each experiment.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			specs, err := experimentsNamed(args[0])
			if err != nil {
				return err
			}
			base, err := flags.load(cmd.Flags())
			if err != nil {
				return err
			}
			var only []string
			if cmd.Flags().Changed("protocol") && flags.protocol != "all" {
				only = strings.Split(flags.protocol, ",")
				for _, n := range only {
					if _, err := protocols.Lookup(n); err != nil {
						return fmt.Errorf("--protocol: %w", err)
					}
				}
			}
			build := experiment.Build()
			runner := experiment.BenchRunner{TLS: useTLS, Check: check, Logger: flags.logger(), Build: build}
			if !external {
				if runner.Binary, err = os.Executable(); err != nil {
					return err
				}
			}
			if verbose {
				runner.Progress = cmd.ErrOrStderr()
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o := experiment.Options{Base: base, Overlay: func(c *config.Config) { flags.overlay(cmd.Flags(), c) },
				Dir: out, Runs: runs, Quick: quick, Only: only,
				Command: "hybridkv " + strings.Join(os.Args[1:], " "), Build: build, Machine: experiment.Machine(),
				Run: runner.Run, Progress: cmd.ErrOrStderr()}
			return runExperiments(ctx, cmd.OutOrStdout(), specs, o)
		},
	}
	flags.register(cmd.Flags(), true)
	cmd.Flags().IntVar(&runs, "runs", 1, "how many times to run every point")
	cmd.Flags().BoolVar(&quick, "quick", false, "fewer values and short runs, for trying an experiment out (results go to NAME-quick)")
	cmd.Flags().StringVar(&out, "out", "experiments", "directory holding each experiment's directory")
	cmd.Flags().BoolVar(&check, "check", false, "record every run's history and check it against the protocol's claims")
	cmd.Flags().BoolVar(&useTLS, "tls", false, "run every link over mutual TLS, with certificates generated for each run")
	cmd.Flags().BoolVar(&external, "external", false, "run against the cluster already running at the configured addresses (--config), started with `hybridkv server` on each machine")
	cmd.Flags().BoolVar(&verbose, "progress", false, "print each run's line per second as well")
	return cmd
}

// experimentsNamed resolves an experiment's name, or all.
func experimentsNamed(name string) ([]experiment.Spec, error) {
	if name == "all" {
		return experiment.Specs, nil
	}
	s, err := experiment.Lookup(name)
	if err != nil {
		return nil, err
	}
	return []experiment.Spec{s}, nil
}

// runExperiments runs each experiment in turn and says where its results
// are and how long it took.
func runExperiments(ctx context.Context, out io.Writer, specs []experiment.Spec, o experiment.Options) error {
	began := time.Now()
	violations := 0
	for _, s := range specs {
		start := time.Now()
		res, err := experiment.Run(ctx, s, o)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d runs, %d operations failed, %d histories with violations; %s (%v)\n", s.Name, res.Runs, res.Failed,
			res.Violations, filepath.Join(res.Dir, s.Name+".md"), time.Since(start).Round(time.Second))
		violations += res.Violations
	}
	if len(specs) > 1 {
		fmt.Fprintf(out, "every experiment done in %v\n", time.Since(began).Round(time.Second))
	}
	if violations > 0 {
		return fmt.Errorf("%d runs failed their consistency check (see the summaries)", violations)
	}
	return nil
}
