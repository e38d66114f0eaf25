package sharding

import (
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Live returns, sorted, the shards whose Leases are held and unexpired at now, and when
// the first of them expires unless renewed (the zero time when none is live). A Lease is
// held by its shard when its holder is the Lease's own name; one released on a clean stop
// has no holder, and its shard is gone at once rather than after its lease duration.
func Live(leases []coordinationv1.Lease, now time.Time) (shards []string, expiry time.Time) {
	for _, l := range leases {
		end, ok := expires(&l)
		if !ok || !now.Before(end) {
			continue
		}
		shards = append(shards, l.Name)
		if expiry.IsZero() || end.Before(expiry) {
			expiry = end
		}
	}
	slices.Sort(shards)
	return shards, expiry
}

// expires returns when a held Lease expires, and false for one nobody holds.
func expires(l *coordinationv1.Lease) (time.Time, bool) {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity != l.Name || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return time.Time{}, false
	}
	return s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second), true
}
