package reconcile_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// withBuiltins knows Widgets and client-go's kinds.
var withBuiltins = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	gv := widgetGVK.GroupVersion()
	s.AddKnownTypes(gv, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}()

// sized is logic that does nothing, for declarations whose wiring is under test.
var sized = reconcile.LogicFunc[*Widget](func(context.Context, *Widget, reconcile.Scope) requeue.Outcome {
	return requeue.Done()
})

// Each wiring mistake that can still be made is refused when the manager is made, with a
// message that names the fix.
func TestAManagerRefusesWiringMistakesNamingTheFix(t *testing.T) {
	widgets := func(opts ...reconcile.Option) reconcile.Declaration {
		return reconcile.For(&Widget{}, sized, append([]reconcile.Option{reconcile.WithFieldOwner("widget-operator")}, opts...)...)
	}
	withoutWidgets := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(withoutWidgets); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		spec reconcile.Manager
		want []string
	}{{
		name: "no declaration",
		spec: reconcile.Manager{},
		want: []string{"at least one controller declaration (reconcile.For)"},
	}, {
		name: "two declarations of one kind",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(), widgets()}},
		want: []string{"two controllers declared for Widget", "declare it once"},
	}, {
		name: "a declaration without a field owner",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, sized)}},
		want: []string{"no field owner", `reconcile.WithFieldOwner("<operator name>")`},
	}, {
		name: "a referenced kind the client reads uncached",
		spec: reconcile.Manager{
			Options:     ctrl.Options{Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}}}}},
			Controllers: []reconcile.Declaration{widgets(reconcile.WithReferences(&corev1.ConfigMap{}, func(w *Widget) []string { return nil }))},
		},
		want: []string{"*v1.ConfigMap", "DisableFor", "remove it from DisableFor"},
	}, {
		name: "a reference read from another kind",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithReferences(&corev1.ConfigMap{}, func(d *appsv1.Deployment) []string { return nil }))}},
		want: []string{"WithReferences(&ConfigMap{}, ...) reads the names from a *v1.Deployment", "*reconcile_test.Widget"},
	}, {
		name: "a cleanup of another kind",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithFinalizer("test.reconcilekit.io/f",
			func(context.Context, *corev1.Pod, reconcile.Scope) requeue.Outcome { return requeue.Done() }))}},
		want: []string{"the cleanup of WithFinalizer takes a *v1.Pod"},
	}, {
		name: "a suspend switch of another kind",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithSuspend(func(*corev1.Pod) bool { return false }))}},
		want: []string{"WithSuspend reads a *v1.Pod", "*reconcile_test.Widget"},
	}, {
		name: "reconcile requests of a kind whose status cannot record them",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{
			reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }),
				reconcile.WithFieldOwner("other"), reconcile.WithReconcileRequests("")),
		}},
		want: []string{"WithReconcileRequests needs a status that records the request handled", "give *v1.ConfigMap the methods of reconcile.RequestStatus"},
	}, {
		name: "a kind the scheme does not know",
		spec: reconcile.Manager{Options: ctrl.Options{Scheme: withoutWidgets}, Controllers: []reconcile.Declaration{widgets()}},
		want: []string{"reconcile_test.Widget", "add its AddToScheme to Options.Scheme"},
	}, {
		name: "a kind restricted differently by two controllers",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{
			widgets(reconcile.WithCache(&corev1.Pod{}, byLabel("a"))),
			reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }),
				reconcile.WithFieldOwner("other"), reconcile.WithCache(&corev1.Pod{}, byLabel("b"))),
		}},
		want: []string{"restricted twice, differently", "make the restrictions agree"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec.Options.Scheme == nil {
				spec.Options.Scheme = withBuiltins
			}
			spec.Options.Metrics = metricsserver.Options{BindAddress: "0"}
			spec.Options.Controller = config.Controller{SkipNameValidation: new(true)}
			_, err := spec.New(cp.Config)
			if err == nil {
				t.Fatal("the manager was made")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error %q does not say %q", err, want)
				}
			}
		})
	}
}

// A child kind the declaration does not own, written late, ends the reconcile with a
// terminal error and a Stalled condition that names the declaration to fix, whatever the
// logic does with the error: never a silent success.
func TestWritingAChildOfAKindNotDeclaredStallsNamingTheFix(t *testing.T) {
	for _, tc := range []struct {
		name    string
		swallow bool // the logic ignores Ensure's error
	}{{"the logic returns the error", false}, {"the logic swallows the error", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c, err := client.New(f.counter.Wrap(cp.Config), client.Options{Scheme: withBuiltins})
			if err != nil {
				t.Fatal(err)
			}
			r := reconcile.NewShell(c, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}}
				if _, _, err := ownership.Ensure(ctx, s.Writer, w, cm); err != nil && !tc.swallow {
					return requeue.Retry(err)
				}
				return requeue.Done()
			}), reconcile.WithClock(f.clock), reconcile.WithChildren(&appsv1.Deployment{}))
			_, err = f.reconcile(t, r)
			if err == nil || !strings.Contains(err.Error(), "terminal") {
				t.Errorf("Reconcile returned %v, want a terminal error", err)
			}
			stalled := conditions.Find(f.live(t), conditions.Stalled)
			if stalled == nil || stalled.Status != metav1.ConditionTrue || !strings.Contains(stalled.Message, "reconcile.WithChildren(&v1.ConfigMap{})") {
				t.Errorf("Stalled = %+v, want True naming reconcile.WithChildren(&v1.ConfigMap{})", stalled)
			}
			if n := f.counter.Count("create", "configmaps"); n != 0 {
				t.Errorf("%d ConfigMaps created, want none", n)
			}
		})
	}
}

// Two managers of one process keep their own state: the owners one notes for a fresh read
// after a child's deletion are not the other's.
func TestTwoShellsOfOneDeclarationShareNoState(t *testing.T) {
	f := newFixture(t)
	owner := f.live(t)
	first, second := f.reconciler(sized), f.reconciler(sized)
	child := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "child",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, widgetGVK)}}}
	childDeleted(f.context(t), scheme, first, child)
	if first.Bereaved() != 1 || second.Bereaved() != 0 {
		t.Errorf("after a child's deletion seen by the first manager, %d and %d owners noted, want 1 and 0", first.Bereaved(), second.Bereaved())
	}
}

func byLabel(l string) cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{l: "yes"})}
}
