package client

import (
	"time"

	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/history"
	"github.com/hybridkv/hybridkv/internal/transport"
)

// Path says how an operation completed.
type Path = clientcore.Path

// The paths an operation can complete on.
const (
	// PathFast: a strong operation completed in one round trip (CURP's
	// superquorum of speculative and witness oks).
	PathFast = clientcore.PathFast
	// PathSlow: the fast path failed (see SlowReason) and the strong
	// operation completed once committed and executed.
	PathSlow = clientcore.PathSlow
	// PathWeak: a weak operation completed on its protocol's weak path.
	PathWeak = clientcore.PathWeak
	// PathCommitted: the committed result arrived before a superquorum
	// did, with no refusal seen (e.g. a client next to the leader); the
	// protocol never fell back.
	PathCommitted = clientcore.PathCommitted
	// PathLog: an operation of a protocol with no fast path (Raft).
	PathLog = clientcore.PathLog
)

// SlowReason says why a strong operation left the fast path.
type SlowReason = clientcore.SlowReason

// The reasons a strong operation leaves the fast path.
const (
	ReasonNone = clientcore.ReasonNone
	// ReasonConflict: a witness or the leader held a conflicting operation.
	ReasonConflict = clientcore.ReasonConflict
	// ReasonCausalDep: a superquorum member lacked one of the session's
	// uncommitted weak writes (CURP-HO).
	ReasonCausalDep = clientcore.ReasonCausalDep
	// ReasonReadDep: the superquorum disagreed on the weak write a strong
	// read returns (CURP-HO).
	ReasonReadDep = clientcore.ReasonReadDep
)

// DelayModel emulates wide-area latency: a one-way delay between each
// pair of sites, plus uniform jitter. Safe for concurrent use.
type DelayModel = transport.DelayModel

// NewDelayModel returns the delays oneWay[from][to] (a square matrix
// indexed by site) with up to jitter added to each, drawn from seed.
func NewDelayModel(oneWay [][]time.Duration, jitter time.Duration, seed uint64) *DelayModel {
	return transport.NewDelayModel(oneWay, jitter, seed)
}

// Faults are fault rules a client's links obey, changeable while it runs
// (Faults.Set, Faults.Clear); the zero value injects nothing.
type Faults = transport.Faults

// FaultRules is a set of fault rules: each drops or delays the frames to
// or from the peers and sites it names.
type FaultRules = transport.RuleSet

// FaultRule is one fault rule.
type FaultRule = transport.Rule

// History records every operation of the clients that share it, for the
// consistency checker; SaveHistory writes it where `hybridkv check` reads
// it.
type History = history.Recorder

// NewHistory returns an empty history; its clock starts now.
func NewHistory() *History { return history.NewRecorder() }

// SaveHistory writes what h recorded to the file at path.
func SaveHistory(h *History, path string) error { return history.WriteFile(path, h.File()) }
