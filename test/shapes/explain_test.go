package shapes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/explain"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// explained returns what explain prints of ref in namespace.
func explained(ctx context.Context, namespace, ref string) (string, error) {
	r, err := explain.Object(ctx, operator.ControlPlane.Config, namespace, ref)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = r.WriteText(&b)
	return b.String(), err
}

// expectExplained waits until explain prints the lines want of ref in namespace.
func expectExplained(t *testing.T, namespace, ref string, want ...string) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		out, err := explained(ctx, namespace, ref)
		if err != nil {
			return err
		}
		if got := strings.TrimSuffix(out, "\n"); got != strings.Join(want, "\n") {
			return fmt.Errorf("explain %s printed\n%s\nwant\n%s", ref, got, strings.Join(want, "\n"))
		}
		return nil
	})
}

// explain serves a cluster-scoped owner whose children are in a namespace it made, and
// says what holds its deletion.
func TestTenantExplained(t *testing.T) {
	e := operator.Env(t)
	home := homeOf(e.Namespace)
	e.Namespaces = []string{home}
	e.Run(t)
	tn := tenant(e.Namespace, "10")
	if err := e.Create(t.Context(), tn); err != nil {
		t.Fatal(err)
	}
	awaitReady(t, e, tn)
	// A cluster-scoped owner, its children in a namespace of its own: all is well.
	expectExplained(t, "", "tenant/"+tn.Name, "Tenant "+tn.Name+": Current")
	if err := e.Create(t.Context(), claim(home)); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete(t.Context(), tn); err != nil {
		t.Fatal(err)
	}
	// Deleted, it waits for the claim: explain says what holds it, and why, from the
	// Stalled the shell wrote of the cleanup.
	awaitCondition(t, e, tn, conditions.Stalled, metav1.ConditionTrue, "ClaimsLeft")
	held := "namespace " + home + " still holds claims data"
	expectExplained(t, "", "tenant/"+tn.Name,
		"Tenant "+tn.Name+": Terminating (held by finalizer "+tenantFinalizer+"; ClaimsLeft: "+held+")",
		"  Warning ClaimsLeft on Tenant "+tn.Name+": "+held)
	releaseClaim(t, e, home)
	awaitGone(t, e, tn)
}

// explain names the child that holds a Site back.
func TestSiteExplained(t *testing.T) {
	e := operator.Env(t)
	e.Run(t)
	s := site(e.Namespace, "nginx:1")
	if err := e.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	awaitCondition(t, e, s, conditions.Ready, metav1.ConditionFalse, "RollingOut")
	// No controller rolls the Deployment out on an API server alone: it holds the Site back.
	expectExplained(t, e.Namespace, "site/web",
		"Deployment site-web: Progressing (Replicas: 0/1) -> Site web: Reconciling (RollingOut: 0 of 1 replicas available)")
}

// explain serves the other shapes: each, converged, is Current, with no chain of children.
func TestShapesExplained(t *testing.T) {
	tests := []struct {
		name string
		obj  func(namespace string) client.Object
		ref  string
	}{
		{name: "(c) a cluster-scoped owner of cluster-scoped children", obj: func(ns string) client.Object { return access(ns, "readers") }, ref: "access/"},
		{name: "(d) an owner of a child in a fixed namespace", obj: func(ns string) client.Object { return mirror(ns) }, ref: "mirror/web"},
		{name: "(e) an owner with no children", obj: func(ns string) client.Object { return bucket(ns) }, ref: "bucket/logs"},
		{name: "(f) an owner of a child named by generateName", obj: func(ns string) client.Object { return batch(ns, "v1") }, ref: "batch/nightly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := operator.Env(t)
			ensureVault(t, e, vault)
			e.Namespaces = []string{vault}
			e.Run(t)
			obj := tt.obj(e.Namespace)
			if err := e.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.Delete(context.Background(), obj) })
			awaitReady(t, e, obj)
			ref := tt.ref
			if strings.HasSuffix(ref, "/") { // cluster-scoped, named after the namespace
				ref += e.Namespace
			}
			kind := obj.GetObjectKind().GroupVersionKind().Kind
			if kind == "" {
				kind = strings.ToUpper(ref[:1]) + ref[1:strings.Index(ref, "/")]
			}
			expectExplained(t, e.Namespace, ref, kind+" "+obj.GetName()+": Current")
		})
	}
}
