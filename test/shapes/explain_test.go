package shapes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
	// Deleted, it waits for the claim: explain says what holds it.
	expectExplained(t, "", "tenant/"+tn.Name, "Tenant "+tn.Name+": Terminating (held by finalizer "+tenantFinalizer+")")
	releaseClaim(t, e, home)
	awaitGone(t, e, tn)
}
