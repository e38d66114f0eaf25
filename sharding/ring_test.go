package sharding_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

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

// TestRingPlacesKeysAsTheExternalSharder pins the ring to the external sharder's:
// testdata/ring.json holds the shard that timebertt/kubernetes-controller-sharding's own
// ring (pkg/sharding/consistenthash at f1d25b3, New(nil, 0, shards...).Hash(key)) gives
// each of 100 keys, for six sets of shards, the last with names whose tokens collide
// (listed by name, as the API server lists Leases). A change here moves objects between
// the two, so it is a breaking one.
func TestRingPlacesKeysAsTheExternalSharder(t *testing.T) {
	raw, err := os.ReadFile("testdata/ring.json")
	if err != nil {
		t.Fatal(err)
	}
	var rings []struct {
		Shards []string          `json:"shards"`
		Keys   map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(raw, &rings); err != nil {
		t.Fatal(err)
	}
	if len(rings) == 0 {
		t.Fatal("testdata/ring.json holds no ring")
	}
	for _, want := range rings {
		t.Run(strings.Join(want.Shards, ","), func(t *testing.T) {
			for _, order := range [][]string{want.Shards, reversed(want.Shards)} {
				r := sharding.NewRing(order...)
				for key, shard := range want.Keys {
					if got := r.Shard(key); got != shard {
						t.Errorf("shards %v: key %q is on %q; the external sharder's ring puts it on %q", order, key, got, shard)
					}
				}
			}
		})
	}
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// The external sharder's own ring tests (pkg/sharding/consistenthash/ring_test.go and
// pkg/sharding/ring/ring_test.go), ported: the same hashes, tokens and keys, the same
// expectations, against Ring.
func TestRingPassesTheExternalShardersRingTests(t *testing.T) {
	// prefixes hashes every string that starts with a prefix to its number, any other to
	// other: the external tests' stand-in hash, which puts a node's tokens where it likes.
	prefixes := func(other uint64, byPrefix map[string]uint64) func(string) uint64 {
		return func(s string) uint64 {
			for p, h := range byPrefix {
				if strings.HasPrefix(s, p) {
					return h
				}
			}
			return other
		}
	}
	for _, tc := range []struct {
		name   string
		ring   *sharding.Ring
		placed map[string]string // key: shard
	}{
		{
			name:   "an empty ring gives no shard",
			ring:   sharding.NewRing(),
			placed: map[string]string{"foo": ""},
		},
		{
			name:   "a ring of one node is not empty",
			ring:   sharding.NewRing("foo"),
			placed: map[string]string{"foo": "foo", "bar": "foo"},
		},
		{
			name:   "the configured hash places nodes and keys",
			ring:   sharding.NewRingWith(prefixes(2, map[string]uint64{"foo": 1}), 1, "foo", "bar"),
			placed: map[string]string{"foo": "foo", "bar": "bar", "baz": "bar"},
		},
		{
			name:   "a key past the last token goes to the first node",
			ring:   sharding.NewRingWith(prefixes(3, map[string]uint64{"foo": 1, "bar": 2}), 1, "foo", "bar"),
			placed: map[string]string{"foo": "foo", "bar": "bar", "baz": "foo"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for key, want := range tc.placed {
				if got := tc.ring.Shard(key); got != want {
					t.Errorf("Shard(%q) = %q, want %q", key, got, want)
				}
			}
		})
	}

	t.Run("the default hash separates keys", func(t *testing.T) {
		r := sharding.NewRing("foo", "bar")
		if r.Shard("1") == r.Shard("10") {
			t.Errorf("keys 1 and 10 are both on %q", r.Shard("1"))
		}
	})

	t.Run("a ring of the available shards probes to each of them", func(t *testing.T) {
		r := sharding.NewRing("foo-0", "foo-1")
		seen := map[string]bool{}
		for i := range 1000 {
			seen[r.Shard(strconv.Itoa(i))] = true
		}
		if len(seen) != 2 || !seen["foo-0"] || !seen["foo-1"] {
			t.Errorf("1000 keys went to %v, want foo-0 and foo-1", seen)
		}
	})
}

func TestLabelsAreTheExternalShardersLabels(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{sharding.LabelShard("foo"), "shard.alpha.sharding.timebertt.dev/foo"},
		{sharding.LabelDrain("foo"), "drain.alpha.sharding.timebertt.dev/foo"},
		{sharding.LabelRing, "alpha.sharding.timebertt.dev/controllerring"},
	} {
		if tc.got != tc.want {
			t.Errorf("label %q, want %q", tc.got, tc.want)
		}
	}
}

// BenchmarkRing is the external sharder's benchmark: a ring made of n shards of
// TokensPerShard tokens, then one key placed, which is what the assigner does on every
// change of the live shards.
func BenchmarkRing(b *testing.B) {
	for _, n := range []int{3, 5, 10} {
		hosts := make([]string, n)
		for i := range hosts {
			hosts[i] = fmt.Sprintf("10.42.0.%d", i)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				sharding.NewRing(hosts...).Shard("Website.webhosting.timebertt.dev/project-foo/homepage")
			}
		})
	}
}
