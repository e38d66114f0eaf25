// Package controller holds the Tenant controller: for each Tenant, which is cluster-scoped,
// a namespace of its own, tenant-NAME, and there a ResourceQuota of spec.replicas pods and
// a RoleBinding of the edit ClusterRole for the group tenant:NAME. A deleted Tenant waits
// while claims are left in its namespace: their data is the tenant's.
package controller

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "example.com/acme/tenant-operator/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// FieldOwner names the operator in the managed fields of what it writes, and in its events.
const FieldOwner = "tenant-operator"

// Finalizer holds a deleted Tenant while claims are left in its namespace.
const Finalizer = "tenancy.acme.io/claims"

// ReasonClaimsLeft is Stalled's reason while claims hold a deleted Tenant.
const ReasonClaimsLeft = "ClaimsLeft"

// ClaimsPoll is how often a deleted Tenant looks at its namespace's claims again: a
// claim's deletion is no event of the Tenant's.
const ClaimsPoll = 2 * time.Second

// NamespaceOf is the name of the namespace the Tenant named name makes.
func NamespaceOf(name string) string { return "tenant-" + name }

// New declares the Tenant controller, with opts added to its own.
func New(opts ...reconcile.Option) *reconcile.Controller[*tenancyv1alpha1.Tenant] {
	return reconcile.For(&tenancyv1alpha1.Tenant{}, reconcile.LogicFunc[*tenancyv1alpha1.Tenant](provision), FieldOwner, append([]reconcile.Option{
		reconcile.WithChildren(&corev1.Namespace{}, &corev1.ResourceQuota{}, &rbacv1.RoleBinding{}),
	}, opts...)...).WithFinalizer(Finalizer, awaitClaims)
}

// provision makes the Tenant's namespace, then its quota and binding there; the shell
// marks the Tenant Ready once they are.
func provision(ctx context.Context, t *tenancyv1alpha1.Tenant, s reconcile.Scope) requeue.Outcome {
	for _, child := range []client.Object{Namespace(t), Quota(t), Binding(t)} {
		if _, _, err := ownership.Ensure(ctx, s.Writer, t, child); err != nil {
			return requeue.Retry(err)
		}
	}
	return requeue.Done()
}

// awaitClaims holds a deleted Tenant while its namespace has claims, Stalled, naming
// them. Once it is gone, the garbage collector deletes the namespace and what is in it.
func awaitClaims(ctx context.Context, t *tenancyv1alpha1.Tenant, s reconcile.Scope) requeue.Outcome {
	var claims corev1.PersistentVolumeClaimList
	if err := s.APIReader.List(ctx, &claims, client.InNamespace(NamespaceOf(t.Name))); err != nil {
		return requeue.Retry(err)
	}
	if len(claims.Items) == 0 {
		return requeue.Done()
	}
	var names []string
	for _, c := range claims.Items {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	conditions.MarkTrue(t, conditions.Stalled, ReasonClaimsLeft, "namespace %s still holds claims %s", NamespaceOf(t.Name), strings.Join(names, ", "))
	return requeue.After(ClaimsPoll)
}

// Namespace is the namespace a Tenant makes, named after it.
func Namespace(t *tenancyv1alpha1.Tenant) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NamespaceOf(t.Name)}}
}

// Quota is the Tenant's ResourceQuota: at most spec.replicas pods in its namespace.
func Quota(t *tenancyv1alpha1.Tenant) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceOf(t.Name), Name: "quota"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(t.Spec.Replicas), resource.DecimalSI)}},
	}
}

// Binding lets the group tenant:NAME edit what is in the Tenant's namespace.
func Binding(t *tenancyv1alpha1.Tenant) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceOf(t.Name), Name: "members"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "tenant:" + t.Name}},
	}
}
