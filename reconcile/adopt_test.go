package reconcile_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// RBACMarkers names, one line a resource, what the shell of each declaration does: the
// lines a kubebuilder project puts beside its adopted controller.
func TestRBACMarkersGrantWhatTheShellDoes(t *testing.T) {
	const (
		widgets    = `// +kubebuilder:rbac:groups=test.reconcilekit.io,resources=widgets,verbs=get;list;watch`
		status     = `// +kubebuilder:rbac:groups=test.reconcilekit.io,resources=widgets/status,verbs=patch`
		finalizers = `// +kubebuilder:rbac:groups=test.reconcilekit.io,resources=widgets/finalizers,verbs=update`
		events     = `// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch`
	)
	for _, tc := range []struct {
		name string
		decl reconcile.Declaration
		want []string
	}{
		{"a controller of its kind alone", reconcile.For(&Widget{}, sized, "widget-operator"),
			[]string{widgets, status, events}},
		{"children: created and patched, and the owner's finalizers for their owner references",
			reconcile.For(&Widget{}, sized, "widget-operator", reconcile.WithChildren(&corev1.ConfigMap{}, &appsv1.StatefulSet{})),
			[]string{widgets, status, finalizers,
				`// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch`,
				`// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch`,
				events}},
		{"a finalizer: the object patched to add and remove it",
			reconcile.For(&Widget{}, sized, "widget-operator").WithFinalizer("test.reconcilekit.io/cleanup", sized),
			[]string{`// +kubebuilder:rbac:groups=test.reconcilekit.io,resources=widgets,verbs=get;list;watch;patch`, status, finalizers, events}},
		{"a referenced kind: read, never written",
			reconcile.For(&Widget{}, sized, "widget-operator").WithReferences(&corev1.Secret{}, func(*Widget) []string { return nil }),
			[]string{widgets, status, `// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch`, events}},
		{"an optional kind: the CRDs listed and watched",
			reconcile.For(&Widget{}, sized, "widget-operator", reconcile.WithChildren(&corev1.ConfigMap{}), reconcile.WithOptional(&corev1.ConfigMap{})),
			[]string{widgets, status, finalizers,
				`// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch`,
				`// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=list;watch`,
				events}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := reconcile.RBACMarkers(tc.decl, withBuiltins)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("RBACMarkers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A kind the scheme does not know has no resource to name: RBACMarkers says which, and
// what to add to the scheme.
func TestRBACMarkersRefuseAKindTheSchemeDoesNotKnow(t *testing.T) {
	builtins := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(builtins); err != nil {
		t.Fatal(err)
	}
	_, err := reconcile.RBACMarkers(reconcile.For(&Widget{}, sized, "widget-operator"), builtins)
	if err == nil || !strings.Contains(err.Error(), "the scheme does not know reconcile_test.Widget:") || !strings.Contains(err.Error(), "AddToScheme") {
		t.Errorf("RBACMarkers with a scheme that does not know Widget: %v; want an error naming reconcile_test.Widget and AddToScheme", err)
	}
}

// SetupCheck is the name of the readiness check Setup adds, one for each declaration.
func TestSetupCheckIsNamedAfterTheKind(t *testing.T) {
	if got := reconcile.SetupCheck(reconcile.For(&Widget{}, sized, "widget-operator")); got != "controller-widget" {
		t.Errorf("SetupCheck of the Widget controller = %q, want controller-widget", got)
	}
}

// widgetReconciler and gadgetReconciler are two reconcilers kubebuilder scaffolded in one
// package, each adopting a declaration: their logic functions are methods, so neither
// takes a name of the other's.
type (
	widgetReconciler struct {
		client.Client
		adopted *reconcile.Adopted
	}
	gadgetReconciler struct {
		client.Client
		adopted *reconcile.Adopted
	}
)

// configure keeps a Widget's ConfigMap.
func (widgetReconciler) configure(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
	desired := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-config"},
		Data:       map[string]string{"widget": w.Name},
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, w, desired); err != nil {
		return requeue.FromError(err)
	}
	return requeue.Done()
}

// configure marks a Gadget (a Widget too, for these tests) Sized.
func (gadgetReconciler) configure(_ context.Context, w *Widget, _ reconcile.Scope) requeue.Outcome {
	conditions.MarkTrue(w, "Sized", "Sized", "sized")
	return requeue.Done()
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	return r.adopted.Reconcile(ctx, r.Client, req)
}

func (r *gadgetReconciler) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	return r.adopted.Reconcile(ctx, r.Client, req)
}

// The scaffold's tests call a reconciler's Reconcile themselves, through the client the
// reconciler holds: an adopted reconciler reconciles with its declaration's shell, through
// that client, against the API server; the second adopted reconciler of the package runs
// its own logic.
//
// A scaffold keeps each Adopted in a package variable (test/adopt does); here they are the
// test's own, so that their shells go with it: a shell alive reports every Widget of the
// API server in reconcilekit_condition, which other tests of the package count.
func TestAdoptedReconcilesThroughTheReconcilersClient(t *testing.T) {
	ns := cp(t).Namespace(t)
	c := cp(t).Client(t, withBuiltins)
	widgets := reconcile.Adopt(reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](widgetReconciler{}.configure), "widget-operator",
		reconcile.WithChildren(&corev1.ConfigMap{})))
	gadgets := reconcile.Adopt(reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](gadgetReconciler{}.configure), "gadget-operator"))
	for _, tc := range []struct {
		name       string
		object     string
		reconciler rtreconcile.Reconciler
		check      func(*testing.T, *Widget)
	}{
		{"the first adopted reconciler keeps the Widget's ConfigMap", "widget", &widgetReconciler{c, widgets}, func(t *testing.T, w *Widget) {
			var cm corev1.ConfigMap
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: w.Name + "-config"}, &cm); err != nil {
				t.Fatalf("the ConfigMap of the adopted Widget controller: %v", err)
			}
			if owners := cm.GetOwnerReferences(); len(owners) != 1 || owners[0].Name != w.Name {
				t.Errorf("the ConfigMap is owned by %v; want the Widget %s", owners, w.Name)
			}
		}},
		{"the second adopted reconciler runs its own logic", "gadget", &gadgetReconciler{c, gadgets}, func(t *testing.T, w *Widget) {
			if cond := conditions.Find(w, "Sized"); cond == nil || cond.Status != metav1.ConditionTrue {
				t.Errorf("the Gadget's Sized condition is %v; want True, set by the second reconciler's logic", cond)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.object}}
			if err := c.Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			req := rtreconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
			// Twice, as a test calls it: the second call reuses the shell the first made.
			for range 2 {
				if _, err := tc.reconciler.Reconcile(t.Context(), req); err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
			}
			if err := c.Get(t.Context(), req.NamespacedName, w); err != nil {
				t.Fatal(err)
			}
			tc.check(t, w)
		})
	}
}
