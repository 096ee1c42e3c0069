package protocols

// TestNames lists the protocols a test that runs each of them should run:
// every one, except under the race detector. There the cost is the
// detector's, and what it watches is the runtime the protocols share, not
// their cores (each runs on one goroutine), so the tests run the default
// protocols and one of each weak-read path of the baselines on Raft-HT's
// server: Raft-HT's cache and Pileus-HT's floor with its redirect (the
// MongoDB-style wait is CURP-HT's read gate), and EPaxos-HO, whose core
// is EPaxos's with the weak path on. The full sets run without the
// detector (.ci/run).
func TestNames() []string {
	if !raceEnabled {
		return Names()
	}
	return append(DefaultNames(), "raft-ht", "pileus-ht", "epaxos-ho")
}

// ProcessTestNames lists the protocols a test that starts replica
// processes, or runs one protocol-independent layer such as TLS, should
// run: every one, except under the race detector. The replicas run as
// processes built without it, so it watches only the test's own process:
// the driver, the client's runtime and the protocol's client core. One
// protocol of each client family then runs (CURP's, Raft-HT's, EPaxos's;
// their hybrids wrap the family's core, so they stand for it). The full
// sets run without the detector (.ci/run).
func ProcessTestNames() []string {
	if !raceEnabled {
		return Names()
	}
	return []string{"curp-ho", "raft-ht", "epaxos-ho"}
}
