package sharding_test

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/sharding"
)

func lease(name, holder string, renewed time.Time, seconds int32) coordinationv1.Lease {
	l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if holder != "" {
		l.Spec.HolderIdentity = &holder
	}
	if !renewed.IsZero() {
		l.Spec.RenewTime = &metav1.MicroTime{Time: renewed}
	}
	if seconds > 0 {
		l.Spec.LeaseDurationSeconds = &seconds
	}
	return l
}

func TestLiveShardsAreThoseHoldingAnUnexpiredLease(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		leases     []coordinationv1.Lease
		wantShards []string
		wantExpiry time.Time
	}{
		{"none", nil, nil, time.Time{}},
		{"held and renewed", []coordinationv1.Lease{lease("b", "b", now.Add(-time.Second), 15), lease("a", "a", now.Add(-5*time.Second), 15)},
			[]string{"a", "b"}, now.Add(10 * time.Second)},
		{"expired", []coordinationv1.Lease{lease("a", "a", now.Add(-15*time.Second), 15)}, nil, time.Time{}},
		{"released on a clean stop", []coordinationv1.Lease{lease("a", "", now, 15)}, nil, time.Time{}},
		{"held by someone else", []coordinationv1.Lease{lease("a", "b", now, 15)}, nil, time.Time{}},
		{"never renewed", []coordinationv1.Lease{lease("a", "a", time.Time{}, 15)}, nil, time.Time{}},
		{"without a duration", []coordinationv1.Lease{lease("a", "a", now, 0)}, nil, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shards, expiry := sharding.Live(tc.leases, now)
			if !slices.Equal(shards, tc.wantShards) || !expiry.Equal(tc.wantExpiry) {
				t.Errorf("Live = %v, %v; want %v, %v", shards, expiry, tc.wantShards, tc.wantExpiry)
			}
		})
	}
}

func TestAnObjectLeavesALiveShardOnlyThroughADrain(t *testing.T) {
	live := func(shards ...string) func(string) bool {
		return func(s string) bool { return slices.Contains(shards, s) }
	}
	for _, tc := range []struct {
		name     string
		current  string
		draining bool
		want     string
		live     func(string) bool
		step     sharding.Step
	}{
		{"new object", "", false, "a", live("a"), sharding.Assign},
		{"at home", "a", false, "a", live("a", "b"), sharding.Keep},
		{"belongs elsewhere", "a", false, "b", live("a", "b"), sharding.Drain},
		{"waiting for the drain", "a", true, "b", live("a", "b"), sharding.Keep},
		{"drained, came home again: still waits", "a", true, "a", live("a", "b"), sharding.Keep},
		{"drain acknowledged", "", false, "b", live("a", "b"), sharding.Assign},
		{"its shard died", "a", false, "b", live("b"), sharding.Assign},
		{"its shard died while draining", "a", true, "b", live("b"), sharding.Assign},
		{"no shard is live", "a", false, "", live(), sharding.Keep},
		{"new object, no shard is live", "", false, "", live(), sharding.Keep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sharding.Decide(tc.current, tc.draining, tc.want, tc.live); got != tc.step {
				t.Errorf("Decide(%q, draining %v, want %q) = %v, want %v", tc.current, tc.draining, tc.want, got, tc.step)
			}
		})
	}
}
