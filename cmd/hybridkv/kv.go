package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
)

// kvFlags are the flags of the interactive get, put and del commands. A
// key is the argument's bytes as given.
type kvFlags struct {
	cfg     configFlags
	weak    bool
	strong  bool
	site    string
	timeout time.Duration
}

func (f *kvFlags) register(cmd *cobra.Command) {
	f.cfg.register(cmd.Flags(), false)
	cmd.Flags().BoolVar(&f.weak, "weak", false, "causal consistency")
	cmd.Flags().BoolVar(&f.strong, "strong", false, "linearizable (the default)")
	cmd.Flags().StringVar(&f.site, "site", "", "the client's site (default: the first client site)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 10*time.Second, "give up after this long")
	cmd.MarkFlagsMutuallyExclusive("weak", "strong")
}

func (f *kvFlags) level() client.Level {
	if f.weak {
		return client.Weak
	}
	return client.Strong
}

// run opens a client and session and runs one operation with them.
func (f *kvFlags) run(cmd *cobra.Command, op func(context.Context, *client.Session) (string, error),
	after ...func(context.Context, *client.Session) error) error {
	cfg, err := f.cfg.load(cmd.Flags())
	if err != nil {
		return err
	}
	site := f.site
	if site == "" {
		site = cfg.Clients.Sites[0]
	}
	cc, err := cluster.ClientConfig(&cfg, site)
	if err != nil {
		return err
	}
	c, err := client.New(cc)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	start := time.Now()
	s := c.NewSession()
	out, err := op(ctx, s)
	elapsed := time.Since(start)
	for _, a := range after {
		if err == nil {
			err = a(ctx, s)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v: is the cluster running (hybridkv cluster)?", f.timeout)
	}
	if err != nil {
		return err
	}
	note := ""
	if f.weak && c.WeakAsStrong() {
		note = fmt.Sprintf(" (%s has no weak path: served as strong)", cfg.Protocol)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s  [%s, %v%s]\n", out, f.level(), elapsed.Round(10*time.Microsecond), note)
	return nil
}

func newGetCmd() *cobra.Command {
	var f kvFlags
	cmd := &cobra.Command{
		Use:   "get KEY [--weak|--strong]",
		Short: "Read a key from a running cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := args[0]
			return f.run(cmd, func(ctx context.Context, s *client.Session) (string, error) {
				v, found, err := s.Get(ctx, key, f.level())
				if !found {
					return "(not found)", err
				}
				return strconv.Quote(string(v)), err
			})
		},
	}
	f.register(cmd)
	return cmd
}

func newPutCmd() *cobra.Command {
	var f kvFlags
	cmd := &cobra.Command{
		Use:   "put KEY VALUE [--weak|--strong]",
		Short: "Write a key in a running cluster",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := args[0]
			return f.run(cmd, func(ctx context.Context, s *client.Session) (string, error) {
				return "ok", s.Put(ctx, key, []byte(args[1]), f.level())
			}, f.settle(key))
		},
	}
	f.register(cmd)
	return cmd
}

func newDelCmd() *cobra.Command {
	var f kvFlags
	cmd := &cobra.Command{
		Use:   "del KEY [--weak|--strong]",
		Short: "Delete a key in a running cluster (no error if it is not there)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := args[0]
			return f.run(cmd, func(ctx context.Context, s *client.Session) (string, error) {
				return "ok", s.Delete(ctx, key, f.level())
			}, f.settle(key))
		},
	}
	f.register(cmd)
	return cmd
}

// settle follows a weak write with a strong read of its key: a weak write
// may complete before it is committed (CURP-HO); the strong read of the
// session orders it into the log before this process exits and stops
// re-sending it.
func (f *kvFlags) settle(key string) func(context.Context, *client.Session) error {
	return func(ctx context.Context, s *client.Session) error {
		if !f.weak {
			return nil
		}
		_, _, err := s.Get(ctx, key, client.Strong)
		return err
	}
}
