package controller_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	starterv1alpha1 "github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/controller"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
)

// The Widget operator explored as Sieve and Acto would: a reference run of the workload,
// then runs killed after one of its writes, with a write failed or its answer lost, and
// with a lagging or coalescing view, each compared with the reference by oracles that
// know nothing of Widgets. Budget keeps it short; -explore.all explores every point.
// Add a step for each thing a person does with a Widget. The Widget is named after the
// exploration's namespace, so that each run has a namespace of its own to make, which the
// operator's cache holds as Namespaces says.
func TestExploringTheWidgetOperatorFindsNothing(t *testing.T) {
	w := &starterv1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: explore.Namespace}, Spec: starterv1alpha1.WidgetSpec{Replicas: 1}}
	explore.Run(t, explore.Exploration{
		Operator:   operator,
		Namespaces: []string{controller.NamespaceOf(explore.Namespace)},
		Workload: []explore.Step{
			explore.Create(w),
			explore.Update("3 replicas", w, func(o client.Object) { o.(*starterv1alpha1.Widget).Spec.Replicas = 3 }),
			explore.Delete(w),
		},
		Budget: 3,
	})
}
