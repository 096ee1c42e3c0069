package curp

import "github.com/hybridkv/hybridkv/internal/protocol"

// Metrics implements protocol.Replica: the shared core's metrics plus the
// witness pool, recovery and the extension's own structures.
func (r *Replica) Metrics() protocol.Metrics {
	m := r.Replica.Metrics()
	c := &protocol.CURPMetrics{
		WitnessRecords:  r.pool.Len(),
		Recovering:      r.recovery != nil,
		RecoveryWaiting: len(r.waiting),
		StaleForwarded:  r.staleForwarded,
		StaleLogged:     r.staleLogged,
	}
	if r.ext != nil {
		r.ext.Metrics(c)
	}
	m.CURP = c
	return m
}
