// Package plot draws the figures of benchmark reports: latency by
// operation class, latency CDFs, and throughput-latency curves of a
// parameter sweep, comparing protocols run on the same workload; and, for
// a run with injected faults, throughput over time with the faults shaded.
//
// It is used only by the bench command, after a run, so the plotting
// library stays out of the replicas' and clients' binaries' hot paths; it
// reads [stats.Report] values and nothing else.
//
// Latencies are drawn on logarithmic axes throughout: in a hybrid store a
// weak operation answered by the local replica takes a fraction of a
// millisecond while a strong one crosses the wide area, so on a linear axis
// one of the two would always be a flat line at zero. Each protocol keeps
// the same colour in every figure (its position in the input), so figures
// of one comparison can be read side by side.
//
// A figure's format follows its file name: .png (rendered at 144 dpi) or
// .svg.
package plot
