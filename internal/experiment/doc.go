// Package experiment runs the project's evaluation from one command: named
// experiments (the T property, the conflict sweep, throughput through a
// leader's failure, YCSB's core workloads, the cross-protocol comparison,
// a TAO-like social-graph mix), each a grid of points (a protocol and a
// value of one parameter, or a protocol alone) run by the benchmark and
// repeated.
//
// Every finished run is kept as its report in the experiment's directory,
// so an interrupted experiment resumes where it stopped and a finished one
// is redrawn without running again. Rounds alternate: every point's first
// run comes before any point's second, so a drift of the machine over the
// experiment spreads over every point instead of landing on a few. At the
// end each experiment writes a CSV of every run, a figure whose error bars
// span the repeats, and a markdown summary with the commands, the build,
// the machine and the prototype's published numbers beside ours where the
// setups correspond.
package experiment
