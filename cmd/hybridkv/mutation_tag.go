//go:build mutations

package main

import (
	"fmt"
	"os"

	"github.com/hybridkv/hybridkv/internal/curp"
)

// A binary built with the mutations tag re-introduces the bug named by
// HYBRIDKV_MUTATION (one of curp.Mutations) in every process it runs,
// servers and bench clients alike, so that a real-process nemesis run can
// show it catches the bug. Other builds ignore the variable.
func init() {
	name := os.Getenv("HYBRIDKV_MUTATION")
	if name == "" {
		return
	}
	if err := curp.Break(name); err != nil {
		fmt.Fprintln(os.Stderr, "hybridkv:", err, "- known mutations:", curp.Mutations)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "hybridkv: MUTATION %q is enabled: this build is deliberately broken\n", name)
}
