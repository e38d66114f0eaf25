package sharding_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/sharding"
)

func TestAShardWhoseLeaseWatchLagsMovesNoObjectOfALiveShard(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	const n = 20
	createConfigMaps(t, c, ns, n)

	// "a" assigns. "b" holds a Lease far longer than a's, and its watch of the Leases
	// can lag: held, it sees a's Lease expire while its own still looks valid, so it
	// would take itself for the only live shard, and the one that assigns.
	start(t, cp, ns, "a", r)
	lag := &hold{}
	startLeased(t, lag.wrap(cp.Config, "leases", sharding.LabelRing+"="+ring), ns, "b", r.declaration("b"), 10*leaseDuration)
	ring := sharding.NewRing("a", "b")
	await(t, placed(c, ns, ring, r))

	// Past the end of a's Lease as b last saw it, a's objects stay a's: b reads the
	// Leases from the API server before it takes a shard for gone.
	lag.engage()
	defer lag.free()
	stayed(t, c, ns, ring, leaseDuration+5*time.Second)
	lag.free()
	await(t, placed(c, ns, ring, r))
}

func TestAnAssignerWhoseLeaseWatchLagsMovesNoObjectOfAShardItHasNotSeenStart(t *testing.T) {
	t.Cleanup(sharding.SetResweep(2 * time.Second)) // after the shards have stopped
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	const n = 20
	createConfigMaps(t, c, ns, n)

	// "a" alone assigns, with a long Lease of its own, so that it stays live in its own
	// eyes while its watch of the Leases is held.
	lag := &hold{}
	startLeased(t, lag.wrap(cp.Config, "leases", sharding.LabelRing+"="+ring), ns, "a", r.declaration("a"), 10*leaseDuration)
	await(t, placed(c, ns, sharding.NewRing("a"), r))

	// "b" starts, which a does not see; its share is labelled for it, with the Secrets,
	// as a replica that assigns and has seen b start labels them.
	lag.engage()
	defer lag.free()
	start(t, cp, ns, "b", r)
	ring := sharding.NewRing("a", "b")
	await(t, func(ctx context.Context) error {
		var lease coordinationv1.Lease
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, &lease)
	})
	label(t, c, ns, n, ring, "b", "b")

	// a sweeps everything every 2 s, on a ring without b: b's objects stay b's, since a
	// reads the Leases from the API server before it takes b for gone.
	stayed(t, c, ns, ring, 8*time.Second)
	lag.free()
	await(t, placed(c, ns, ring, r))
}

// stayed fails the test when, within d, a ConfigMap of ns is not labelled, not draining,
// for the shard ring gives it.
func stayed(t *testing.T, c client.Client, ns string, ring *sharding.Ring, d time.Duration) {
	t.Helper()
	for began := time.Now(); time.Since(began) < d; time.Sleep(200 * time.Millisecond) {
		var cms corev1.ConfigMapList
		if err := c.List(t.Context(), &cms, client.InNamespace(ns), client.HasLabels{"test"}); err != nil {
			t.Fatal(err)
		}
		for _, cm := range cms.Items {
			want := ring.Shard(sharding.Key("", "ConfigMap", ns, cm.Name))
			if got := cm.Labels[shardLabel]; got != want || cm.Labels[drainLabel] != "" {
				t.Fatalf("%v into the lag, ConfigMap %s is labelled %q (drain %q), want %q: a live shard's object was moved",
					time.Since(began).Round(100*time.Millisecond), cm.Name, got, cm.Labels[drainLabel], want)
			}
		}
	}
}

func TestTheAssigningShardMovesBackWhatAnotherPlacedElsewhere(t *testing.T) {
	t.Cleanup(sharding.SetResweep(2 * time.Second)) // after the shards have stopped
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	const n = 20
	createConfigMaps(t, c, ns, n)
	start(t, cp, ns, "a", r)
	start(t, cp, ns, "b", r)
	ring := sharding.NewRing("a", "b")
	await(t, placed(c, ns, ring, r))

	// a's objects, and their Secrets, labelled for b, as a replica that assigned for a
	// while on a ring of its own leaves them: the ring of a, which assigns, does not
	// change, so only a sweep of everything finds them.
	moved := label(t, c, ns, n, ring, "a", "b")
	if moved == 0 {
		t.Fatal("the ring gives a no ConfigMap: the scenario needs other names")
	}
	await(t, placed(c, ns, ring, r))
	t.Logf("%d of a's ConfigMaps placed on b went back to a", moved)
}

// label labels for shard to the ConfigMaps cm-0 to cm-<n-1> of ns that ring gives to owner,
// and their Secrets, as an assigner would, and returns how many.
func label(t *testing.T, c client.Client, ns string, n int, ring *sharding.Ring, owner, to string) int {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, shardLabel, to))
	labelled := 0
	for i := range n {
		name := fmt.Sprintf("cm-%d", i)
		if ring.Shard(sharding.Key("", "ConfigMap", ns, name)) != owner {
			continue
		}
		meta := metav1.ObjectMeta{Namespace: ns, Name: name}
		if err := c.Patch(t.Context(), &corev1.Secret{ObjectMeta: meta}, patch); err != nil {
			t.Fatal(err)
		}
		if err := c.Patch(t.Context(), &corev1.ConfigMap{ObjectMeta: meta}, patch); err != nil {
			t.Fatal(err)
		}
		labelled++
	}
	return labelled
}
