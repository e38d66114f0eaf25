package sharding

import (
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// TokensPerShard is how many virtual nodes each shard has on the ring: the external
// sharder's default, so that both rings are the same. A shard's share then differs from a
// fair one by up to about an eighth, with the shards' names (29 to 37 % of the objects
// for three shards).
const TokensPerShard = 100

// Ring is a consistent-hash ring of shards: an object's key belongs to the shard of the
// first token at or after the key's hash. Adding or removing a shard moves only the keys
// of the tokens it gains or loses, about 1/n of them. The zero Ring has no shards.
type Ring struct {
	tokens []uint64          // sorted
	owners map[uint64]string // token to shard
}

// NewRing returns the ring of shards, in any order; duplicates count once. A shard's
// tokens are the xxhash of "<shard>-<i>" for i from 0 to TokensPerShard-1, as the
// external sharder's.
func NewRing(shards ...string) *Ring {
	r := &Ring{owners: make(map[uint64]string, len(shards)*TokensPerShard)}
	for _, shard := range shards {
		for i := range TokensPerShard {
			t := xxhash.Sum64String(shard + "-" + strconv.Itoa(i))
			if _, taken := r.owners[t]; !taken {
				r.tokens = append(r.tokens, t)
			}
			// A collision of two shards' tokens goes to the smaller name, whatever the
			// order the shards came in.
			if owner, taken := r.owners[t]; !taken || shard < owner {
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
	i, _ := slices.BinarySearch(r.tokens, xxhash.Sum64String(key))
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
