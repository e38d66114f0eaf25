package sharding

import "time"

// SetResweep sets how often the shard that assigns sweeps every object again, for the
// shards started after it, and returns what restores it.
func SetResweep(d time.Duration) (restore func()) {
	old := resweep
	resweep = d
	return func() { resweep = old }
}

// SetCRDRecheck sets how often the assigner asks whether the CRD of an optional child kind
// came or went, and returns what restores it.
func SetCRDRecheck(d time.Duration) (restore func()) {
	old := crdRecheck
	crdRecheck = d
	return func() { crdRecheck = old }
}

// NewRingWith is NewRing with the hash and the tokens a shard given, as the external
// sharder's consistenthash.New takes them, so that its tests port unchanged.
func NewRingWith(hash func(string) uint64, tokensPerShard int, shards ...string) *Ring {
	return newRing(hash, tokensPerShard, shards...)
}
