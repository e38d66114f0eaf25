// Package sharding spreads one operator's objects over its replicas, so that an operator
// is no longer limited by what one process can cache and reconcile.
//
// Every replica is a shard: it holds a Lease of its own, named after it and labelled with
// the ring (the operator), and its manager caches and reconciles only the objects, and the
// children of objects, that carry its shard label. Every replica also runs the assigner,
// which watches the shards' Leases and acts on the first live shard by name only: it
// hashes objects onto a consistent-hash ring of the live shards and writes the shard
// label, watching only what has no shard label and listing, when the ring changes, only
// what may move. Moving an
// object from a live shard takes two steps, so that two shards never reconcile it at
// once: the assigner sets the drain label, the owning shard lets the object's children
// go and removes both labels in its next reconcile of the object and stops, and only then
// does the assigner label them for the new shard. A shard whose Lease has expired or was
// released is not asked: its objects are labelled for the others at once, once a read of
// the Leases from the API server, not only the watch, which can lag, says it is gone.
//
// The labels, the Lease scheme and the ring (its tokens since December 2023, checked against
// placements made by its own code) follow timebertt/kubernetes-controller-sharding
// (see docs/sharding.md for where this package differs and why), so an operator built on
// it could run under that project's external sharder instead of the built-in assigner.
//
// An operator opts in from its main function: New, with the controller's declaration
// (Options.Controller), whose reconciled kind and declared children (reconcile.WithChildren)
// are what the ring shards, so they cannot differ from what the controller owns; Configure
// on the reconcile.Manager before it is made, which restricts its cache and makes the shard
// its Gate; then Run instead of the manager's Start. Nothing changes for an operator that
// does not.
package sharding
