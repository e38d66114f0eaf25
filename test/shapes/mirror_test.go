package shapes_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Shape (d): a namespaced owner that reads a Secret in another, fixed namespace and writes
// a child there: a Mirror publishes the names of the keys of the Secret "shared" of the
// vault namespace in a ConfigMap of that namespace, which its finalizer deletes, since a
// namespaced owner cannot own an object of another namespace.

// vault is the fixed namespace of the operator's Mirrors.
const vault = "shapes-vault"

const mirrorFinalizer = "shapes.example.com/mirror"

func mirrors(vault string) *reconcile.Controller[*Mirror] {
	return reconcile.For(&Mirror{}, reconcile.LogicFunc[*Mirror](func(ctx context.Context, m *Mirror, s reconcile.Scope) requeue.Outcome {
		var shared corev1.Secret
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: vault, Name: "shared"}, &shared); err != nil {
			return requeue.Retry(err)
		}
		want := mirrorOf(vault, m.Namespace, m.Name, strings.Join(slices.Sorted(maps.Keys(shared.Data)), ","))
		live := &corev1.ConfigMap{}
		switch err := s.Client.Get(ctx, client.ObjectKeyFromObject(want), live); {
		case apierrors.IsNotFound(err):
			return requeue.FromError(s.Client.Create(ctx, want))
		case err != nil:
			return requeue.Retry(err)
		case !maps.Equal(live.Data, want.Data):
			before := live.DeepCopy()
			live.Data = want.Data
			return requeue.FromError(s.Client.Patch(ctx, live, client.MergeFrom(before)))
		}
		return requeue.Done()
	}), "mirror-operator").
		WithFinalizer(mirrorFinalizer, func(ctx context.Context, m *Mirror, s reconcile.Scope) requeue.Outcome {
			return requeue.FromError(client.IgnoreNotFound(s.Client.Delete(ctx, mirrorOf(vault, m.Namespace, m.Name, ""))))
		})
}

// mirrorOf is the ConfigMap a Mirror writes in the vault.
func mirrorOf(vault, namespace, name, keys string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: vault, Name: "mirror-" + namespace + "-" + name}, Data: map[string]string{"keys": keys}}
}

func mirror(namespace string) *Mirror {
	return &Mirror{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web"}}
}

func sharedSecret(vault string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: vault, Name: "shared"}, Data: map[string][]byte{"password": []byte("x"), "user": []byte("y")}}
}

// ensureVault makes the vault and its Secret, unless they exist.
func ensureVault(t *testing.T, c client.Client, vault string) {
	t.Helper()
	for _, obj := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vault}}, sharedSecret(vault)} {
		if err := c.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

func TestMirrorTable(t *testing.T) {
	// A vault of the table's own: the operator's tests may leave ConfigMaps in theirs.
	const tableVault = "shapes-vault-table"
	held := mirror("")
	held.Finalizers = []string{mirrorFinalizer}
	table(mirrors(tableVault), reconciletest.ReconcilerTestCase{
		Name:         "a new mirror publishes the shared keys in the vault",
		Object:       mirror(""),
		Given:        []client.Object{sharedSecret(tableVault)},
		WantRequests: []string{"patch mirrors", "create configmaps", "patch mirrors/status"},
		WantObjects:  []client.Object{mirrorOf(tableVault, reconciletest.CaseNamespace, "web", "password,user")},
		WantStatus:   ready(),
	}, reconciletest.ReconcilerTestCase{
		Name:   "a deleted mirror deletes what it wrote in the vault",
		Object: held,
		Given:  []client.Object{sharedSecret(tableVault), mirrorOf(tableVault, reconciletest.CaseNamespace, "web", "password,user")},
		Meanwhile: func(ctx context.Context, c client.Client, ns string) error {
			return c.Delete(ctx, mirror(ns))
		},
		WantRequests: []string{"delete configmaps", "patch mirrors"},
	}).Run(t)
}

func TestMirrorOperator(t *testing.T) {
	e := operator.Env(t)
	ensureVault(t, e, vault)
	e.Namespaces = []string{vault}
	e.Run(t)
	m := mirror(e.Namespace)
	if err := e.Create(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	awaitReady(t, e, m)
	published := mirrorOf(vault, e.Namespace, "web", "")
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(published), published); err != nil {
		t.Fatal(err)
	}
	if got := published.Data["keys"]; got != "password,user" {
		t.Errorf("published keys %q, want password,user", got)
	}
	if err := e.Delete(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, e, m)
	awaitGone(t, e, published)
}

func TestMirrorExplored(t *testing.T) {
	reconciletest.SkipShort(t)
	ensureVault(t, operator.ControlPlane.Client(t, nil), vault)
	m := mirror("")
	explored(t, explore.Exploration{
		Namespaces: []string{vault},
		Workload: []explore.Step{
			explore.Create(m),
			explore.Update("a label", m, func(o client.Object) { o.SetLabels(map[string]string{"tier": "gold"}) }),
			explore.Delete(m),
		},
	})
}
