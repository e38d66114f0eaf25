package controller_test

import (
	"testing"
	"time"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
)

func TestAtMetricsCountItsObjectsAndConditionsAndGoWithThem(t *testing.T) {
	e := newEnv(t)
	_, metrics := e.RunServingMetrics(t)
	before := metrics.Read(t)

	later := e.create(t, "later", time.Now().Add(time.Hour), "echo later")
	now := e.create(t, "now", time.Now(), "echo done")
	e.awaitPhase(t, now, cnatv1alpha1.PhaseDone)
	metrics.AwaitConditions(t, "At", now, map[string]string{"Succeeded": "True", "Ready": "True"})
	// Waiting for its schedule is work still to do: Reconciling, as kstatus reads it.
	metrics.AwaitConditions(t, "At", later, map[string]string{"Ready": "False", "Reconciling": "True"})

	after := metrics.Read(t)
	objects := map[string]bool{}
	for _, s := range after.Series("reconcilekit_condition", map[string]string{"kind": "At", "namespace": e.Namespace}) {
		objects[s.Labels["name"]] = true
	}
	if len(objects) != 2 {
		t.Errorf("the condition series name the Ats %v, want later and now", objects)
	}
	if n := after.Since(before, "reconcilekit_writes_total", map[string]string{"kind": "Pod", "write": "create", "changed": "true"}); n != 1 {
		t.Errorf("reconcilekit_writes_total counts %v pods created, want the 1 of the At that is due", n)
	}
	if n := after.Since(before, "reconcilekit_reconciles_total", map[string]string{"kind": "At", "outcome": "after"}); n < 1 {
		t.Errorf("reconcilekit_reconciles_total counts %v At reconciles that wait (after), want at least the one of the At that is not due", n)
	}
	if n := after.Since(before, "reconcilekit_reconciles_total", map[string]string{"kind": "At", "outcome": "done"}); n < 1 {
		t.Errorf("reconcilekit_reconciles_total counts %v At reconciles done, want at least one", n)
	}

	for _, at := range []*cnatv1alpha1.At{later, now} {
		if err := e.Delete(t.Context(), at); err != nil {
			t.Fatal(err)
		}
		metrics.AwaitConditions(t, "At", at, nil)
	}
}
