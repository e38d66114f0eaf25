package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	atv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/phase"
)

// olderStatus is a status as an older version of an operator might have written it,
// under a schema that allowed more: a phase this version does not know, conditions of
// types and reasons it never sets, and fields it has no place for.
func olderStatus(phase string) map[string]any {
	status := map[string]any{
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "WaitingForLegacyBackend", "message": "written by version 0.1", "lastTransitionTime": "2020-01-01T00:00:00Z"},
			map[string]any{"type": "LegacyHealthy", "status": "Unknown", "reason": "Migrating", "message": "a condition no version sets any more", "lastTransitionTime": "2020-01-01T00:00:00Z"},
		},
		"legacyReplicas": int64(3),
		"lastRun":        map[string]any{"node": "gone-node", "attempts": int64(9)},
	}
	if phase != "" {
		status["phase"] = phase
	}
	return status
}

func TestStatusesAnOlderVersionWroteAreHandledWithoutARetryStorm(t *testing.T) {
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	groups := map[*operator]string{
		memcachedOperator: "cache.example.com/memcacheds",
		podsetOperator:    "apps.example.com/podsets",
		atOperator:        "cnat.example.com/ats",
	}
	// Stored before the operators start, as an upgrade finds them.
	for _, op := range operators {
		op.create(t, admin, ns, op.name, 2)
		for i, phase := range []string{"PENDING", "SCHEDULED"} {
			if op != atOperator {
				phase = ""
			}
			key := fmt.Sprintf("/registry/%s/%s/%s-%d", groups[op], ns, op.name, i)
			if err := cp.RewriteStored(t.Context(), key, func(obj map[string]any) { obj["status"] = olderStatus(phase) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	// What the API server serves: the phase as stored, the fields its schema does not
	// know pruned.
	var stored atv1alpha1.At
	await(t, time.Minute, func(ctx context.Context) error {
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "at-1"}, &stored); err != nil {
			return err
		}
		if stored.Status.Phase != "SCHEDULED" {
			return fmt.Errorf("at-1 is served with phase %q", stored.Status.Phase)
		}
		return nil
	})

	var created ledger
	for _, op := range operators {
		watchStatus(t, ns, op)
		op.start(t, created.wrap(op.config(t)), ns)
	}
	// The Memcacheds, the PodSets and the At in a phase it knows converge; the At in a
	// phase it does not know says so.
	await(t, sized().limit, func(ctx context.Context) error {
		for _, op := range []*operator{memcachedOperator, podsetOperator} {
			if err := converged(ctx, admin, ns, op); err != nil {
				return err
			}
		}
		if err := atsDone(ctx, admin, ns, "at", 1); err != nil {
			return err
		}
		var a atv1alpha1.At
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "at-1"}, &a); err != nil {
			return err
		}
		if c := conditions.Find(&a, conditions.Stalled); c == nil || c.Status != metav1.ConditionTrue || c.Reason != phase.ReasonUnknown {
			return fmt.Errorf("at-1, in phase %q, is not Stalled with reason %s: %v", a.Status.Phase, phase.ReasonUnknown, c)
		}
		return nil
	})

	// And then they rest: a minute's reconciles, for six objects, stay few.
	window := 15 * time.Second
	if *full {
		window = time.Minute
	}
	before := map[string]float64{}
	for _, op := range operators {
		before[op.name] = reconciles(op.name)
	}
	time.Sleep(window)
	for _, op := range operators {
		if n := reconciles(op.name) - before[op.name]; n > 20 {
			t.Errorf("the %s operator reconciled %v times in %v for two objects: a retry storm", op.name, n, window)
		} else {
			t.Logf("the %s operator reconciled %v times in %v for two objects", op.name, n, window)
		}
	}
	created.check(t)
}
