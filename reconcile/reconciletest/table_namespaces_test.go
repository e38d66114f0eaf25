package reconciletest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// outfitter is a reconciler of a ConfigMap that stands for a tenant: it writes a ConfigMap
// named made into the namespace t- followed by the tenant's, which someone else makes.
type outfitter struct{ c client.Client }

func (r outfitter) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	made := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "t-" + req.Namespace, Name: "made"}}
	return rtreconcile.Result{}, client.IgnoreAlreadyExists(r.c.Create(ctx, made))
}

// A namespace a case's given object makes, one made of the case's (t-{namespace}) or one of
// a fixed name, goes when the case ends, and for good, with what is in it, on an API server
// alone too (which never finishes a namespace's deletion itself): a case leaves no namespace
// behind, and the next case that names a fixed one finds it new, not Terminating.
func TestATableRemovesTheNamespacesItMadeForGivenObjects(t *testing.T) {
	cp := StartAPIServer(t)
	const fixed = "reconciletest-elsewhere"
	var seen []string // the namespaces of the cases that ran
	tc := ReconcilerTestCase{
		Name:   "given objects in other namespaces",
		Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}},
		Given: []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "t-" + CaseNamespace, Name: "given"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fixed, Name: "given"}},
		},
		Meanwhile: func(_ context.Context, _ client.Client, ns string) error {
			seen = append(seen, ns)
			return nil
		},
		WantRequests: []string{"create configmaps"},
		WantObjects: []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "t-" + CaseNamespace, Name: "given"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "t-" + CaseNamespace, Name: "made"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fixed, Name: "given"}},
		},
	}
	table := ReconcilerTests{
		ControlPlane: cp,
		Reconciler:   func(d Deps) rtreconcile.Reconciler { return outfitter{c: d.Client} },
		Cases:        []ReconcilerTestCase{tc},
	}
	// Twice: the second run makes the fixed namespace anew.
	for run := range 2 {
		table.Run(t)
		if t.Failed() {
			t.Fatalf("run %d of the table failed", run+1)
		}
		if len(seen) != run+1 {
			t.Fatalf("%d cases ran; want %d", len(seen), run+1)
		}
		for _, ns := range []string{"t-" + seen[run], fixed} {
			err := cp.client.Get(t.Context(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("after run %d the namespace %s is still there (%v)", run+1, ns, err)
			}
			var left corev1.ConfigMapList
			if err := cp.client.List(t.Context(), &left, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, o := range left.Items {
				t.Errorf("after run %d ConfigMap %s/%s is still there", run+1, ns, o.Name)
			}
		}
	}
}

// homesteader is a reconciler that makes the namespace of what it reconciles, with a ConfigMap
// in it: tenant-NAME for a cluster-scoped object (a tenant), made-NAMESPACE for a namespaced one.
type homesteader struct{ c client.Client }

func (r homesteader) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	name := "tenant-" + req.Name
	if req.Namespace != "" {
		name = "made-" + req.Namespace
	}
	if err := client.IgnoreAlreadyExists(r.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})); err != nil {
		return rtreconcile.Result{}, err
	}
	made := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "made"}}
	return rtreconcile.Result{}, client.IgnoreAlreadyExists(r.c.Create(ctx, made))
}

// A namespace the reconciler makes during a case goes when the case ends, with what is in
// it of the case's kinds, as one the case made does: one made of the case's namespace, and
// one of a cluster-scoped tenant's fixed name, whose case runs alone.
func TestATableRemovesTheNamespacesTheReconcilerMade(t *testing.T) {
	cp := StartAPIServer(t)
	var seen []string // the namespaces of the namespaced case
	table := ReconcilerTests{
		ControlPlane: cp,
		Reconciler:   func(d Deps) rtreconcile.Reconciler { return homesteader{c: d.Client} },
		Cases: []ReconcilerTestCase{{
			Name:   "a namespace made of the case's",
			Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}},
			Meanwhile: func(_ context.Context, _ client.Client, ns string) error {
				seen = append(seen, ns)
				return nil
			},
			WantRequests: []string{"create namespaces", "create configmaps"},
			WantObjects: []client.Object{
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "made-" + CaseNamespace, Name: "made"}},
			},
		}, {
			Name:         "a cluster-scoped tenant's namespace",
			Object:       &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reconciletest-acme"}},
			WantRequests: []string{"create namespaces", "create configmaps"},
			WantObjects: []client.Object{
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-reconciletest-acme", Name: "made"}},
			},
		}},
	}
	// Twice: the second run makes the tenant's namespace anew, which a namespace left
	// behind, or left Terminating, would refuse.
	for run := range 2 {
		t.Run("table", table.Run) // returns once its parallel cases have too
		if t.Failed() {
			t.Fatalf("run %d of the table failed", run+1)
		}
		if len(seen) != run+1 {
			t.Fatalf("%d cases ran; want %d", len(seen), run+1)
		}
		for _, ns := range []string{"made-" + seen[run], "tenant-reconciletest-acme"} {
			err := cp.client.Get(t.Context(), client.ObjectKey{Name: ns}, &corev1.Namespace{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("after run %d the namespace %s is still there (%v)", run+1, ns, err)
			}
			var left corev1.ConfigMapList
			if err := cp.client.List(t.Context(), &left, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, o := range left.Items {
				t.Errorf("after run %d ConfigMap %s/%s is still there", run+1, ns, o.Name)
			}
		}
	}
}
