// Package workload generates the benchmark's operation mix: which level
// (strong or weak), which kind (get, put or scan) and which key each
// operation of a session uses, and the value a put writes.
//
// The default mix follows the seeds' parameters so results stay
// comparable: a share of weak operations, separate write shares for strong
// and weak operations, a share of operations aimed at one shared hot key
// (the conflict rate), and keys drawn from YCSB's Zipfian distribution.
// Instead of the write shares, the kinds can come from one of YCSB's six
// core workloads (see [YCSBWorkloads]), the weak share still choosing each
// operation's level; or from a mix that fixes kind and level together,
// such as TAO's (see [Mixes]).
//
// A scan reads the keys from its first key on, as many as its length:
// the range of their names, always with a bounded end (see
// [KeyNames.RangeEnd]), since a range read counts every key of its range
// even past its limit. Go's rand.Zipf only accepts exponents above 1,
// which pushed the seeds to an unrealistically steep 1.01; this package
// draws any skew from 0 to [MaxZipfSkew]. Below 1 it implements the YCSB
// generator (Gray et al., "Quickly generating billion-record synthetic
// databases"), for the usual skew 0.99, so that results compare with
// YCSB's; from 1 on, where those formulas fail, it samples Zipf's law
// exactly by rejection-inversion (Hörmann and Derflinger). Like YCSB's
// scrambled variant it hashes the Zipfian rank onto the key space by
// default, so the popular keys are spread out instead of being 0, 1, 2...,
// which would otherwise make them neighbours in any range-partitioned or
// ordered structure. Keys are drawn as numbers and sent as byte strings
// (see [KeyNames]): "user" and the number, zero-padded so that the key
// space's names sort as the numbers do.
//
// Every value written carries the identity of the operation that wrote it
// (see [Generator.Value] and [DecodeValue]), so a consistency checker can
// tell which write a read observed.
//
// A [Generator] serves one session and is deterministic given its seed, so
// a run can be repeated operation for operation.
package workload
