// Command hybridkv runs hybridkv replicas, local clusters and benchmarks.
//
//	hybridkv bench               # default 3-replica emulated geo cluster, CURP
//	hybridkv cluster             # start a local cluster until Ctrl-C
//	hybridkv server --id 1       # one replica, for real deployments
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "hybridkv:", err)
		os.Exit(1)
	}
}
