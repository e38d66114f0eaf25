package ownership_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/workload"
)

// An operator's logic ensures its Deployment and reports the rollout in its conditions.
// The Writer is the one the reconcile shell gives the logic (reconcile.Scope), whose client
// is the manager's: in steady state Ensure sends no request at all.
func ExampleEnsure() {
	var (
		ctx   context.Context
		w     ownership.Writer // scope.Writer
		owner interface {
			client.Object
			conditions.Setter
		} // the object being reconciled
	)
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "nginx:1.27",
		}}}, 1001),
	}
	desired := workload.Deployment(owner.GetNamespace(), owner.GetName(), 3, template)

	dep, result, err := ownership.Ensure(ctx, w, owner, desired)
	switch {
	case ownership.IsNotControlled(err):
		conditions.MarkFalse(owner, conditions.Available, "DeploymentNotOwned", "%v", err)
		return
	case err != nil:
		return // requeue.Retry(err)
	}
	if result.Action == ownership.Updated {
		fmt.Println("reverted drift:\n" + result.Diff)
	}
	readiness.Deployment(dep).Mark(owner)
}

func ExampleSetController() {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", UID: "6b1d"}}
	elsewhere := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "billing", Name: "card"}}

	err := ownership.SetController(owner, elsewhere, scheme.Scheme)
	fmt.Println(ownership.IsInvalidOwner(err), err)
	// Output: true shop/cart cannot own billing/card: owner references cannot cross namespaces; create the object in the owner's namespace, or do not own it: track it by a label and delete it in a finalizer's cleanup
}
