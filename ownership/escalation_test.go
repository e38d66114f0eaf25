package ownership_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// TestABindingRefusedForEscalationNamesTheBindMarker ensures, as an operator whose role may
// write RoleBindings but lacks bind, a RoleBinding to a ClusterRole "tenant-edit" of a
// cluster's "edit" rules (the API server alone leaves "edit" itself empty: its rules are
// aggregated by kube-controller-manager): the API server refuses it for escalation with
// every rule the operator does not hold; the error names instead the one marker that grants
// bind on that role, and with that grant the same Ensure succeeds.
func TestABindingRefusedForEscalationNamesTheBindMarker(t *testing.T) {
	ctx := t.Context()
	admin, err := client.New(cp(t).Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := cp(t).Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}}
	if err := admin.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "escalation-binder"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"get", "list", "watch", "create", "patch"}},
	}}
	if err := admin.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), role) })
	c, err := client.New(cp(t).ConfigFor(t, role.Name, role.Name), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	edit := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tenant-edit"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "services", "configmaps", "secrets", "persistentvolumeclaims"}, Verbs: []string{"create", "delete", "deletecollection", "patch", "update"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets", "replicasets"}, Verbs: []string{"create", "delete", "deletecollection", "patch", "update"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: []string{"create", "delete", "deletecollection", "patch", "update"}},
	}}
	if err := admin.Create(ctx, edit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), edit) })
	members := func() *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "members"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: edit.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "tenant-members"}},
		}
	}

	_, _, err = ownership.Ensure(ctx, ownership.NewTestWriter(c), owner, members())
	var forbidden *ownership.ForbiddenError
	if !errors.As(err, &forbidden) || !apierrors.IsForbidden(err) {
		t.Fatalf("Ensure = %v; want a *ForbiddenError that apierrors.IsForbidden holds for", err)
	}
	t.Logf("%v", err)
	const want = "// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=tenant-edit"
	if got := forbidden.Marker(); got != want {
		t.Errorf("the marker is\n\t%s\nwant\n\t%s", got, want)
	}
	if forbidden.Binding != "RoleBinding "+ns+"/members" || forbidden.Role != "ClusterRole tenant-edit" {
		t.Errorf("Binding %q, Role %q; want the RoleBinding and ClusterRole tenant-edit", forbidden.Binding, forbidden.Role)
	}
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "APIGroups") {
		t.Errorf("the error is\n%s\nwant the marker and not the rules of the role", msg)
	}

	// The fix it names is the whole fix.
	if err := admin.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "escalation-binder-bind"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{edit.Name}},
	}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Delete(context.Background(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "escalation-binder-bind"}})
		_ = admin.Delete(context.Background(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "escalation-binder-bind"}})
	})
	if err := admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "escalation-binder-bind"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "escalation-binder-bind"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: role.Name}}}); err != nil {
		t.Fatal(err)
	}
	// The API server's authorizer sees the new grant once its informer has it.
	reconciletest.Eventually(t, func(ctx context.Context) error {
		_, _, err := ownership.Ensure(ctx, ownership.NewTestWriter(c), owner, members())
		return err
	})
}
