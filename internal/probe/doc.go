// Package probe measures how fast the machine itself is while a benchmark
// runs on it, so that a run whose throughput moves can be told apart from a
// machine whose speed moved.
//
// On a shared host the same work can take a tenth longer from one minute to
// the next: another tenant's traffic slows memory, while the cores' own
// arithmetic stays as fast. A replica's work is dominated by lookups in
// large maps, so it slows with memory. The probe alternates two fixed
// pieces of work on one thread: dependent loads along a random cycle
// through a buffer far larger than any cache (each load waits for the one
// before, so it times the memory's latency), and register-only arithmetic
// (which times the core). Both are timed in the thread's own CPU time, so
// waiting for a turn on a busy CPU does not count. It does a few short
// batches a second and sleeps in between, at the lowest priority, so that
// beside a saturating benchmark it takes a few percent of one core and
// little of the caches the benchmark uses.
package probe
