package sharding

import (
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// TokensPerShard is how many virtual nodes each shard has on the ring: the external
// sharder's default, so that both rings are the same. A shard's share then differs from a
// X
// for three shards named replica-0 to replica-2).
const TokensPerShard = 100

// Ring is a consistent-hash ring of shards: an object's key belongs to the shard of the
// first token at or after the key's hash. Adding or removing a shard moves only the keys
// of the tokens it gains or loses, about 1/n of them. The zero Ring has no shards.
//
// It is the ring of timebertt/kubernetes-controller-sharding (its package
// pkg/sharding/consistenthash since December 2023), so that both place every object on
// the same shard; sharding/testdata/ring.json holds placements made by that code.
type Ring struct {
	hash   func(string) uint64
	tokens []uint64          // sorted
	owners map[uint64]string // token to shard
}

// NewRing returns the ring of shards, in any order; duplicates count once. A shard's
// tokens are the xxhash of the shard's name followed by i in decimal ("replica-07" is
// token 7 of replica-0), for i from 0 to TokensPerShard-1, as the external sharder's.
func NewRing(shards ...string) *Ring {
	return newRing(xxhash.Sum64String, TokensPerShard, shards...)
}

// newRing is NewRing with the hash and the tokens a shard given, for tests.
func newRing(hash func(string) uint64, tokensPerShard int, shards ...string) *Ring {
	r := &Ring{hash: hash, owners: make(map[uint64]string, len(shards)*tokensPerShard)}
	for _, shard := range shards {
		for i := range tokensPerShard {
			t := hash(shard + strconv.Itoa(i))
			owner, taken := r.owners[t]
			if !taken {
				r.tokens = append(r.tokens, t)
			}
			// Two shards can share a token, and not only by chance: "shard-1" followed by
			// 10 is "shard-11" followed by 0. The external sharder gives such a token to
			// the shard it added last, which is the greater name when it lists the Leases
			// in the API server's order, by name; here it does whatever the order.
			if !taken || shard > owner {
				r.owners[t] = shard
			}
		}
	}
	slices.Sort(r.tokens)
	return r
}

// Shard returns the shard key belongs to, or "" when the ring is empty.
func (r *Ring) Shard(key string) string {
	if r == nil || len(r.tokens) == 0 {
		return ""
	}
	i, _ := slices.BinarySearch(r.tokens, r.hash(key))
	if i == len(r.tokens) {
		i = 0 // past the last token: round to the first
	}
	return r.owners[r.tokens[i]]
}

// Key returns the ring key of an object of the given API group and kind: the same
// "group/kind/namespace/name" the external sharder hashes, so that both place an object
// on the same shard of the same ring.
func Key(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}
