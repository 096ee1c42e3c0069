package rafthtclient

import (
	"github.com/hybridkv/hybridkv/internal/clientcore"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// scanAnswer completes done, a weak scan's answer from a replica (rep), with
// what the session's cache knows of keys in its range as of a later index
// than the replica's state, and reports whether it could: the cache's
// effect on a count, or on keys past the answer's cut (its limit), depends
// on keys the answer does not show, and such a scan is answered at the
// leader instead, whose state holds everything the cache learned once it
// applied it.
//
// A scan reads keys the cache cannot list, some of them absent, so it sets
// the cache's barrier instead of learning them: the session's later reads
// come from states at least as new as this one (see cache.covers).
func (c *Client) scanAnswer(ca *cache, r *weakRead, rep *wire.Reply, done *clientcore.Completion) bool {
	read, ok := wire.ScanRead(&r.req.Op)
	if !ok || !rep.Found || c.ignoreCache {
		ca.barrier(rep.Applied)
		return true
	}
	answer, err := wire.DecodeTxnResult(rep.Value)
	if err != nil || len(answer.Results) != 1 {
		ca.barrier(rep.Applied)
		return true // not this client's to judge: the checker sees it
	}
	res := answer.Results[0]
	var writes []wire.KeyWrite
	slot := done.Slot
	for key, v := range ca.keys {
		if v.asOf > rep.Applied && read.Covers(key) {
			writes = append(writes, wire.KeyWrite{Key: key, Found: v.found, Value: v.value})
			slot = max(slot, v.slot)
		}
	}
	if len(writes) == 0 {
		ca.barrier(rep.Applied)
		return true
	}
	if read.CountOnly || res.More || res.Count > uint64(len(res.KVs)) {
		return false
	}
	res = wire.Overlay(&read, res, writes, nil)
	done.Value, done.Slot = wire.AppendScanResult(nil, &res), slot
	ca.barrier(rep.Applied)
	return true
}
