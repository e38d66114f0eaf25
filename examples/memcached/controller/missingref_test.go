package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/reconcilekit/reconcilekit/conditions"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// TestAMemcachedWaitingForItsConfigMapIsNotReconciledInALoop proves that a Memcached
// naming a ConfigMap that does not exist waits quietly: it says so once and is then left
// alone, not requeued, until the ConfigMap's creation brings it back and it recovers.
func TestAMemcachedWaitingForItsConfigMapIsNotReconciledInALoop(t *testing.T) {
	e := newEnv(t)
	start := reconcileCounts()
	e.Run(t)
	mc := &cachev1beta1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "cache"},
		Spec:       cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{ConfigMapRef: &cachev1beta1.ConfigMapReference{Name: "tuned"}}},
	}
	if err := e.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if d := conditions.Find(mc, conditions.Stalled); d == nil || d.Reason != "ConfigMapNotFound" || mc.Status.ObservedGeneration != mc.Generation {
			return fmt.Errorf("want Stalled because ConfigMapNotFound, have %+v", mc.Status.Conditions)
		}
		return nil
	})

	// The test's Memcached is the only object in the namespace the operator watches, and
	// the tests of this package run one at a time, each stopping its operator when it
	// ends: every reconcile the process counts from here on is one of this Memcached.
	const window = 5 * time.Second
	before, statusWrites := reconcileCounts(), e.Requests.Count("patch", "memcacheds/status")
	time.Sleep(window)
	after := reconcileCounts()
	waiting := after.total - before.total
	t.Logf("reconciles of the Memcached until it reported ConfigMapNotFound: %v (by outcome: %v); in the %v after: %v (by outcome: %v); status writes in those %v: %d",
		before.total-start.total, before.minus(start), window, waiting, after.minus(before), window, e.Requests.Count("patch", "memcacheds/status")-statusWrites)
	if waiting > 3 {
		t.Errorf("the Memcached waiting for its ConfigMap was reconciled %v times in %v; want at most 3: it must wait for the ConfigMap, not poll for it",
			waiting, window)
	}

	// The ConfigMap appears: the Memcached recovers by itself.
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "tuned", Labels: map[string]string{controller.ConfigMapLabel: ""}},
		Data:       map[string]string{"args": "-c 2048"},
	}
	if err := e.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if !conditions.IsTrue(mc, conditions.Ready) {
			return fmt.Errorf("not Ready: %+v", mc.Status.Conditions)
		}
		return nil
	})
	t.Logf("Ready %v after the ConfigMap's creation, after %v reconciles in all", time.Since(created).Round(time.Millisecond), reconcileCounts().total-start.total)
	if d := conditions.Find(mc, conditions.Stalled); d != nil && d.Status == metav1.ConditionTrue {
		t.Errorf("Ready but still Stalled: %+v", d)
	}
	e.awaitArgs(t, mc, "-c", "2048")
}

// counts are reconciles of the memcached controller finished by the process: in all, as
// controller-runtime counts them, and by outcome, as reconcilekit's shell does.
type counts struct {
	total     float64
	byOutcome map[string]float64
}

func (c counts) minus(earlier counts) map[string]float64 {
	d := map[string]float64{}
	for o, n := range c.byOutcome {
		if n != earlier.byOutcome[o] {
			d[o] = n - earlier.byOutcome[o]
		}
	}
	return d
}

func reconcileCounts() counts {
	c := counts{byOutcome: map[string]float64{}}
	families, _ := metrics.Registry.Gather() // a partial answer still counts what it has
	for _, family := range families {
		for _, m := range family.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case family.GetName() == "controller_runtime_reconcile_total" && labels["controller"] == "memcached":
				c.total += m.GetCounter().GetValue()
			case family.GetName() == "reconcilekit_reconciles_total" && labels["kind"] == "Memcached":
				c.byOutcome[labels["outcome"]] += m.GetCounter().GetValue()
			}
		}
	}
	return c
}
