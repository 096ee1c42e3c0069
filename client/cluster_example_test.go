package client_test

import (
	"os"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/config"
)

// exampleCluster starts a three-replica CURP-HO cluster in this process,
// its sites 1 ms apart, for the examples; a program of its own would point
// at a running cluster instead (`hybridkv cluster`). It returns the
// replicas' addresses and a function that stops the cluster.
func exampleCluster() ([]client.Replica, func()) {
	cfg := config.Default()
	cfg.Protocol = "curp-ho"
	cfg.Network.OneWayMs = 1
	if err := cluster.FreePorts(&cfg); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "hybridkv-example")
	if err != nil {
		panic(err)
	}
	l, err := cluster.StartLocal(&cfg, dir, nil)
	if err != nil {
		panic(err)
	}
	var replicas []client.Replica
	for _, r := range cfg.Replicas {
		site, _ := cfg.SiteIndex(r.Site)
		replicas = append(replicas, client.Replica{ID: r.ID, Addr: r.Addr, Site: site})
	}
	return replicas, func() {
		l.Stop()
		os.RemoveAll(dir)
	}
}
