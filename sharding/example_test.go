package sharding_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/sharding"
)

// An operator opts in from its main function: the shard is made from the controller's
// declaration, changes the manager before it is made, and runs it.
func Example() {
	copier := reconcile.For(&corev1.ConfigMap{},
		reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome {
			return requeue.Done()
		}), "copier",
		reconcile.WithChildren(&corev1.Secret{}))
	m := reconcile.Manager{
		Options:     ctrl.Options{LeaderElectionNamespace: "copier-system"},
		Controllers: []reconcile.Declaration{copier},
	}
	shard, err := sharding.New(sharding.Options{Ring: "copier", Name: "copier-0", Controller: copier})
	if err != nil {
		fmt.Println(err)
		return
	}
	shard.Configure(&m)
	// The cache holds only what is labelled for this shard: the ConfigMaps and their Secrets.
	for kind, by := range m.Options.Cache.ByObject {
		fmt.Printf("%T: %s\n", kind, by.Label)
	}
	fmt.Println("gate:", m.Gate == shard, "leader election needed:", *m.Options.Controller.NeedLeaderElection)
	// then: mgr, err := m.New(cfg); ...; return shard.Run(ctx, mgr)

	// Unordered output:
	// *v1.ConfigMap: shard.alpha.sharding.timebertt.dev/copier=copier-0
	// *v1.Secret: shard.alpha.sharding.timebertt.dev/copier=copier-0
	// gate: true leader election needed: false
}

// New says what a shard lacks rather than failing later.
func ExampleNew() {
	_, err := sharding.New(sharding.Options{Name: "copier-0"})
	fmt.Println(err)
	// Output:
	// sharding: a shard needs a ring name
	// the declaration of the controller whose objects it shards
}

// The ring places an object's key on a shard; adding a shard moves only about 1/n of the
// keys, and only to the new shard.
func ExampleRing() {
	three := sharding.NewRing("replica-0", "replica-1", "replica-2")
	four := sharding.NewRing("replica-0", "replica-1", "replica-2", "replica-3")
	moved, toNew := 0, 0
	for i := range 1000 {
		key := sharding.Key("cnat.example.com", "At", "default", fmt.Sprintf("at-%d", i))
		if before, after := three.Shard(key), four.Shard(key); before != after {
			moved++
			if after == "replica-3" {
				toNew++
			}
		}
	}
	fmt.Printf("moved: about a quarter: %t; all to the new shard: %t\n", moved > 150 && moved < 350, moved == toNew)
	// Output:
	// moved: about a quarter: true; all to the new shard: true
}

// Decide is the assigner's rule: an object held by a live shard is drained before it
// moves; one with no live shard is assigned at once.
func ExampleDecide() {
	live := func(shard string) bool { return shard != "replica-2" }
	fmt.Println(sharding.Decide("replica-0", false, "replica-0", live)) // where it belongs
	fmt.Println(sharding.Decide("replica-0", false, "replica-1", live)) // a live shard lets it go first
	fmt.Println(sharding.Decide("replica-2", false, "replica-1", live)) // its shard is gone
	fmt.Println(sharding.Decide("", false, "replica-1", live))          // new
	// Output:
	// Keep
	// Drain
	// Assign
	// Assign
}
