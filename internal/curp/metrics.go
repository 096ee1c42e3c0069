package curp

import "github.com/hybridkv/hybridkv/internal/protocol"

// The names of CURP's own metrics (see protocol.Measure), for the tests
// that read them.
const (
	MetricWitnessRecords  = "witness_pool_records"
	MetricRecovering      = "curp_recovering"
	MetricRecoveryWaiting = "curp_recovery_waiting_requests"
	MetricStaleForwarded  = "witness_stale_records_forwarded_total"
	MetricStaleLogged     = "witness_stale_records_logged_total"
	MetricStaleOutlived   = "witness_stale_records_outlived_total"
	MetricHeldRequests    = "curp_held_requests"
	MetricHeldOutlived    = "curp_held_requests_released_outlived_total"
)

// Metrics implements protocol.Replica: the shared core's metrics plus the
// witness pool, recovery and the requests held for their session's order.
// A hybrid protocol's core adds its own.
func (r *Replica) Metrics() protocol.Metrics {
	m := r.Replica.Metrics()
	recovering := 0.0
	if r.recovery != nil {
		recovering = 1
	}
	m.Own = append(m.Own,
		protocol.Measure{Name: MetricWitnessRecords, Value: float64(r.pool.Len()),
			Help: "CURP witness pool size: unsynced operations' records on a follower, appended but unapplied operations on the leader."},
		protocol.Measure{Name: MetricRecovering, Value: recovering,
			Help: "1 while a new CURP leader replays the witnesses' records."},
		protocol.Measure{Name: MetricRecoveryWaiting, Value: float64(len(r.waiting)),
			Help: "Requests held until the leader's recovery ends."},
		protocol.Measure{Name: MetricStaleForwarded, Counter: true, Value: float64(r.staleForwarded),
			Help: "Witness records held past the stale age and handed to the leader to log (see the curp package's sweepStale)."},
		protocol.Measure{Name: MetricStaleLogged, Counter: true, Value: float64(r.staleLogged),
			Help: "Stale witness records this replica logged as leader: operations whose clients gave up before they reached the log."},
		protocol.Measure{Name: MetricStaleOutlived, Counter: true, Value: float64(r.staleOutlived),
			Help: "Stale witness records given up: their session expired after they were pooled, so their operation may have been applied already (see the curp package's outlived)."},
		protocol.Measure{Name: MetricHeldRequests, Value: float64(r.heldRequests()),
			Help: "Requests the leader holds until their session's previous weak write is logged."},
		protocol.Measure{Name: MetricHeldOutlived, Counter: true, Value: float64(r.heldOutlived),
			Help: "Weak writes the leader stopped holding requests behind after a whole session expiry: their session had expired, so they may have been applied already (see the curp package's releaseOutlived)."},
	)
	return m
}
