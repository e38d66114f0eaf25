package controller_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "example.com/acme/tenant-operator/api/v1alpha1"
	"example.com/acme/tenant-operator/controller"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
)

// The Tenant operator explored: a reference run of the workload, then runs killed after
// one of its writes, with a write failed or its answer lost, and with a lagging or
// coalescing view, each compared with the reference: any violation fails the test. The Tenant is named after the
// exploration's namespace, so that each run has a namespace of its own to make, which the
// operator's cache holds as Namespaces says.
func TestExploringTheTenantOperatorFindsNothing(t *testing.T) {
	tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: explore.Namespace}, Spec: tenancyv1alpha1.TenantSpec{Replicas: 1}}
	explore.Run(t, explore.Exploration{
		Operator:   operator,
		Namespaces: []string{controller.NamespaceOf(explore.Namespace)},
		Workload: []explore.Step{
			explore.Create(tn),
			explore.Update("a bigger quota", tn, func(o client.Object) { o.(*tenancyv1alpha1.Tenant).Spec.Replicas = 3 }),
			explore.Delete(tn),
		},
		Budget: 3,
	})
}
