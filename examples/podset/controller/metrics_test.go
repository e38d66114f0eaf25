package controller_test

import (
	"testing"
)

func TestPodSetMetricsCountItsObjectsAndConditionsAndGoWithThem(t *testing.T) {
	e := newEnv(t)
	_, metrics := e.RunServingMetrics(t)
	before := metrics.Read(t)

	web, api := e.create(t, "web", 2), e.create(t, "api", 1)
	e.awaitReady(t, web)
	e.awaitReady(t, api)
	converged := map[string]string{"Available": "True", "Ready": "True", "Progressing": "False", "Degraded": "False"}
	metrics.AwaitConditions(t, "PodSet", web, converged)
	metrics.AwaitConditions(t, "PodSet", api, converged)

	after := metrics.Read(t)
	objects := map[string]bool{}
	for _, s := range after.Series("reconcilekit_condition", map[string]string{"kind": "PodSet", "namespace": e.Namespace}) {
		objects[s.Labels["name"]] = true
	}
	if len(objects) != 2 {
		t.Errorf("the condition series name the PodSets %v, want web and api", objects)
	}
	if n := after.Since(before, "reconcilekit_writes_total", map[string]string{"kind": "Deployment", "write": "create", "changed": "true"}); n != 2 {
		t.Errorf("reconcilekit_writes_total counts %v Deployments created, want the 2 of the PodSets", n)
	}
	if n := after.Since(before, "reconcilekit_writes_total", map[string]string{"kind": "PodSet", "write": "status"}); n < 2 {
		t.Errorf("reconcilekit_writes_total counts %v status writes of PodSets, want at least one each", n)
	}
	if n := after.Since(before, "reconcilekit_reconciles_total", map[string]string{"kind": "PodSet", "outcome": "done"}); n < 2 {
		t.Errorf("reconcilekit_reconciles_total counts %v PodSet reconciles done, want at least one each", n)
	}

	// A resize is no fight.
	e.resize(t, web, 3)
	e.awaitReady(t, web)
	metrics.AwaitConditions(t, "PodSet", web, converged)
	if n := metrics.Read(t).Since(after, "reconcilekit_fights_total", nil); n != 0 {
		t.Errorf("a resize made %v fights, want none", n)
	}

	if err := e.Delete(t.Context(), web); err != nil {
		t.Fatal(err)
	}
	metrics.AwaitConditions(t, "PodSet", web, nil)
	metrics.AwaitConditions(t, "PodSet", api, converged)
}
