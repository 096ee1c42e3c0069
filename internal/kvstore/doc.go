// Package kvstore is the replicated state machine: the key-value map every
// replica builds by applying the log in slot order, and the session table
// that makes a retried operation take effect once.
//
// The session table is part of the replicated state: every replica decides
// "already applied" the same way, at the same slot, so a duplicate that
// reaches the log twice (a retry after a leader change) is skipped
// everywhere. So is its forgetting: a session idle for the expiry leaves
// every replica's table at the same clock entry of the log (Store.Tick).
package kvstore
