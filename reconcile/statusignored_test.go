package reconcile_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// A child whose status the owner declares it does not read wakes the owner for any change
// but its status: the disruption controller's rewrites of a PodDisruptionBudget's status
// reconcile nothing, a person's edit of its labels is put right at once. Undeclared, the
// same status write reconciles the owner.
func TestAStatusIgnoredWakesTheOwnerForEveryChangeButItsStatus(t *testing.T) {
	for _, tc := range []struct {
		name          string
		opts          []reconcile.Option
		statusWakesIt bool
	}{
		{"declared", []reconcile.Option{reconcile.WithStatusIgnored(&policyv1.PodDisruptionBudget{})}, false},
		{"not declared", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var reconciles atomic.Int32
			logic := reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				reconciles.Add(1)
				pdb := &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, Labels: map[string]string{"app": w.Name}},
					Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))},
				}
				_, _, err := ownership.Ensure(ctx, s.Writer, w, pdb)
				return requeue.Retry(err) // nil: done
			})
			w, _, c := runWidgets(t, logic, append(tc.opts, reconcile.WithChildren(&policyv1.PodDisruptionBudget{}))...)
			pdb := &policyv1.PodDisruptionBudget{}
			key := client.ObjectKeyFromObject(w)
			// settled waits until the reconciles stop and returns how many there were.
			settled := func() int32 {
				t.Helper()
				reconciletest.Eventually(t, func(ctx context.Context) error { return c.Get(ctx, key, pdb) })
				for range 10 {
					n := reconciles.Load()
					time.Sleep(2 * time.Second) // the coalescing delay, and more
					if reconciles.Load() == n {
						return n
					}
				}
				t.Fatalf("the owner was still being reconciled after 20 s: %d reconciles", reconciles.Load())
				return 0
			}
			before := settled()

			pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
			if err := c.Status().Update(t.Context(), pdb); err != nil {
				t.Fatal(err)
			}
			if woken := settled() > before; woken != tc.statusWakesIt {
				t.Errorf("a status write woke the owner: %v, want %v", woken, tc.statusWakesIt)
			}

			before = reconciles.Load()
			pdb.Labels["app"] = "someone-else"
			if err := c.Update(t.Context(), pdb); err != nil {
				t.Fatal(err)
			}
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := c.Get(ctx, key, pdb); err != nil {
					return err
				}
				if reconciles.Load() == before || pdb.Labels["app"] != w.Name {
					return fmt.Errorf("%d reconciles since the label was changed, the label %q", reconciles.Load()-before, pdb.Labels["app"])
				}
				return nil
			})
		})
	}
}
