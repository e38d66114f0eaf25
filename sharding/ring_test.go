package sharding_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/reconcilekit/reconcilekit/sharding"
)

// keys returns n object keys like an operator's.
func keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = sharding.Key("cnat.example.com", "At", fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("at-%d", i))
	}
	return ks
}

// shares counts the keys each shard of r gets.
func shares(r *sharding.Ring, ks []string) map[string]int {
	n := map[string]int{}
	for _, k := range ks {
		n[r.Shard(k)]++
	}
	return n
}

func TestRingGivesEveryKeyToOneOfItsShards(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shards []string
	}{
		{"no shard", nil},
		{"one shard", []string{"a"}},
		{"three shards", []string{"a", "b", "c"}},
		{"a duplicate counts once", []string{"a", "b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sharding.NewRing(tc.shards...)
			for _, k := range keys(1000) {
				got := r.Shard(k)
				if len(tc.shards) == 0 {
					if got != "" {
						t.Fatalf("an empty ring gave %q a shard, %q", k, got)
					}
					continue
				}
				found := false
				for _, s := range tc.shards {
					found = found || s == got
				}
				if !found {
					t.Fatalf("key %q went to %q, not one of %v", k, got, tc.shards)
				}
			}
		})
	}
}

func TestRingDoesNotDependOnTheOrderOfItsShards(t *testing.T) {
	a, b := sharding.NewRing("x", "y", "z"), sharding.NewRing("z", "x", "y")
	for _, k := range keys(2000) {
		if a.Shard(k) != b.Shard(k) {
			t.Fatalf("key %q: %q in one order, %q in another", k, a.Shard(k), b.Shard(k))
		}
	}
}

func TestRingSharesKeysEvenly(t *testing.T) {
	for _, shards := range [][]string{{"a", "b"}, {"a", "b", "c"}, {"replica-0", "replica-1", "replica-2", "replica-3", "replica-4"}} {
		t.Run(fmt.Sprint(len(shards)), func(t *testing.T) {
			ks := keys(20000)
			fair := len(ks) / len(shards)
			for s, n := range shares(sharding.NewRing(shards...), ks) {
				// 100 virtual nodes a shard keep every share within a third of fair.
				if n < fair*2/3 || n > fair*4/3 {
					t.Errorf("shard %s got %d keys; a fair share is %d", s, n, fair)
				}
			}
		})
	}
}

func TestRingMovesOnlyTheKeysOfAShardThatComesOrGoes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after []string
	}{
		{"a shard joins three", []string{"a", "b", "c"}, []string{"a", "b", "c", "d"}},
		{"a shard of four leaves", []string{"a", "b", "c", "d"}, []string{"a", "b", "d"}},
		{"three to five", []string{"a", "b", "c"}, []string{"a", "b", "c", "d", "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := sharding.NewRing(tc.before...), sharding.NewRing(tc.after...)
			inAfter := map[string]bool{}
			for _, s := range tc.after {
				inAfter[s] = true
			}
			inBefore := map[string]bool{}
			for _, s := range tc.before {
				inBefore[s] = true
			}
			moved := 0
			ks := keys(20000)
			for _, k := range ks {
				from, to := before.Shard(k), after.Shard(k)
				if from == to {
					continue
				}
				moved++
				// A key moves only away from a shard that left or to a shard that joined.
				if inAfter[from] && inBefore[to] {
					t.Fatalf("key %q moved from %q to %q, both in both rings", k, from, to)
				}
			}
			changed := 0
			for _, s := range tc.after {
				if !inBefore[s] {
					changed++
				}
			}
			for _, s := range tc.before {
				if !inAfter[s] {
					changed++
				}
			}
			// About changed/max(n) of the keys move; a third more leaves room for the hash.
			limit := len(ks) * changed / max(len(tc.before), len(tc.after)) * 4 / 3
			if moved > limit {
				t.Errorf("%d of %d keys moved; want at most %d", moved, len(ks), limit)
			}
			t.Logf("%d of %d keys moved", moved, len(ks))
		})
	}
}

func TestKeyIsTheExternalShardersObjectKey(t *testing.T) {
	if got, want := sharding.Key("cnat.example.com", "At", "default", "at-1"), "cnat.example.com/At/default/at-1"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

// TestRingPlacesKeysAsTheExternalSharder pins the ring to the external sharder's: tokens
// the xxhash of "<shard>-<i>", 100 a shard, a key on the shard of the first token at or
// after its hash. A change here moves objects between the two, so it is a breaking one.
func TestRingPlacesKeysAsTheExternalSharder(t *testing.T) {
	shards := []string{"replica-0", "replica-1", "replica-2"}
	var tokens []uint64
	owner := map[uint64]string{}
	for _, s := range shards {
		for i := range 100 {
			tok := xxhash.Sum64String(fmt.Sprintf("%s-%d", s, i))
			tokens = append(tokens, tok)
			owner[tok] = s
		}
	}
	slices.Sort(tokens)
	want := func(key string) string {
		i, _ := slices.BinarySearch(tokens, xxhash.Sum64String(key))
		return owner[tokens[i%len(tokens)]]
	}

	r := sharding.NewRing(shards...)
	for _, k := range keys(5000) {
		if got, want := r.Shard(k), want(k); got != want {
			t.Fatalf("key %q is on %q; the external sharder's ring puts it on %q", k, got, want)
		}
	}
}
