package explore_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// An exploration is an operator, started by its tests' TestMain (reconciletest.Operator's
// Main), and a workload that ends by deleting what it made. A test explores it with
// explore.Run(t, x), which fails t with the report of every run an oracle faults.
func Example() {
	// An operator that keeps a Secret beside each ConfigMap it is given; its logic is
	// elided here.
	mirror := reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome {
		return requeue.Done()
	})
	operator := &reconciletest.Operator{
		User:        "mirror-operator",
		Role:        "config/rbac/role.yaml",
		Controllers: []reconcile.Declaration{reconcile.For(&corev1.ConfigMap{}, mirror, "mirror-operator", reconcile.WithChildren(&corev1.Secret{}))},
	}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"tier": "gold"}}
	x := explore.Exploration{
		Operator: operator,
		Workload: []explore.Step{
			explore.Create(settings),
			explore.Update("tier silver", settings, func(o client.Object) { o.(*corev1.ConfigMap).Data["tier"] = "silver" }),
			explore.Delete(settings),
		},
		// A short pass in the package's usual tests; make test-explore sets
		// -explore.all for every point.
		Budget: 6,
		// The operator stamps the time it last rotated a key in an annotation: two
		// reference runs a second apart may agree on it, so it is masked by name.
		Masks: []explore.Mask{{Kind: "Secret", Path: "metadata.annotations[example.com/rotated]", Why: "a clock's"}},
	}
	for _, s := range x.Workload {
		fmt.Println(s.Name)
	}
	// Output:
	// create ConfigMap settings
	// update ConfigMap settings: tier silver
	// delete ConfigMap settings
}

// A violation reads as its run, its oracle and what it found; Report.Details adds the
// command that replays the run and the writes of both runs side by side.
func ExampleViolation_String() {
	v := explore.Violation{Run: "crash@7", Class: explore.Crash, Oracle: explore.CreatedTwice,
		Detail: "write 9 created configmaps shop-settings again, which write 4 had created"}
	fmt.Println(v)
	// Output:
	// crash@7 [created twice]: write 9 created configmaps shop-settings again, which write 4 had created
}
