package reconcile_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
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
		return reconcile.For(&Widget{}, sized, "widget-operator", opts...)
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
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, sized, "")}},
		want: []string{"no field owner", `reconcile.For(&reconcile_test.Widget{}, logic, "<operator name>", ...)`},
	}, {
		name: "a referenced kind the client reads uncached",
		spec: reconcile.Manager{
			Options:     ctrl.Options{Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}}}}},
			Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, sized, "widget-operator").WithReferences(&corev1.ConfigMap{}, func(w *Widget) []string { return nil })},
		},
		want: []string{"watches corev1.ConfigMap", "DisableFor", "remove it from DisableFor"},
	}, {
		name: "reconcile requests of a kind whose status cannot record them",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{
			reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "other", reconcile.WithReconcileRequests("")),
		}},
		want: []string{"WithReconcileRequests needs a status that records the request handled", "give corev1.ConfigMap the methods of reconcile.RequestStatus"},
	}, {
		name: "a status ignored of a kind the controller does not own",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithChildren(&appsv1.Deployment{}), reconcile.WithStatusIgnored(&policyv1.PodDisruptionBudget{}))}},
		want: []string{"WithStatusIgnored(&policyv1.PodDisruptionBudget{}) names a kind the controller does not own", "declare it with WithChildren too"},
	}, {
		name: "a status ignored of a kind with none",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithChildren(&corev1.ConfigMap{}), reconcile.WithStatusIgnored(&corev1.ConfigMap{}))}},
		want: []string{"WithStatusIgnored(&corev1.ConfigMap{}) names a kind with no status"},
	}, {
		name: "a kind the scheme does not know",
		spec: reconcile.Manager{Options: ctrl.Options{Scheme: withoutWidgets}, Controllers: []reconcile.Declaration{widgets()}},
		want: []string{"reconcile_test.Widget", "add its AddToScheme to Options.Scheme"},
	}, {
		name: "a kind restricted differently by two controllers",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{
			widgets(reconcile.WithCache(&corev1.Pod{}, byLabel("a"))),
			reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "other", reconcile.WithCache(&corev1.Pod{}, byLabel("b"))),
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
			_, err := spec.New(cp(t).Config)
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
// terminal error and a Stalled condition that names the WithChildren line to add, whatever
// the logic does with the error: never a silent success. A declaration without WithChildren
// owns no kind, so its Writer writes none.
func TestWritingAChildOfAKindNotDeclaredStallsNamingTheFix(t *testing.T) {
	configMap := func(w *Widget) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}}
	}
	job := func(w *Widget) client.Object {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "backup", Image: "busybox"}}}}}}
	}
	for _, tc := range []struct {
		name     string
		children []client.Object // declared
		child    func(*Widget) client.Object
		swallow  bool // the logic ignores Ensure's error
		resource string
		want     string
	}{{
		name: "another kind declared, the logic returns the error", children: []client.Object{&appsv1.Deployment{}}, child: configMap, resource: "configmaps",
		want: "ownership: ConfigMap widget is of a kind the controller does not own (it owns Deployment): declare it, so that its changes are watched and it is cached: reconcile.WithChildren(&appsv1.Deployment{}, &corev1.ConfigMap{})",
	}, {
		name: "another kind declared, the logic swallows the error", children: []client.Object{&appsv1.Deployment{}}, child: configMap, swallow: true, resource: "configmaps",
		want: "reconcile.WithChildren(&appsv1.Deployment{}, &corev1.ConfigMap{})",
	}, {
		name: "no WithChildren at all", child: job, resource: "jobs",
		want: "ownership: Job widget is of a kind the controller does not own (it owns none): declare it, so that its changes are watched and it is cached: reconcile.WithChildren(&batchv1.Job{})",
	}, {
		name: "no WithChildren, the logic swallows the error", child: job, swallow: true, resource: "jobs",
		want: "reconcile.WithChildren(&batchv1.Job{})",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c, err := client.New(f.counter.Wrap(cp(t).Config), client.Options{Scheme: withBuiltins})
			if err != nil {
				t.Fatal(err)
			}
			opts := []reconcile.Option{reconcile.WithClock(f.clock)}
			if tc.children != nil {
				opts = append(opts, reconcile.WithChildren(tc.children...))
			}
			r := reconcile.NewShell(c, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				if _, _, err := ownership.Ensure(ctx, s.Writer, w, tc.child(w)); err != nil && !tc.swallow {
					return requeue.Retry(err)
				}
				return requeue.Done()
			}), opts...)
			_, err = f.reconcile(t, r)
			if err == nil || !strings.Contains(err.Error(), "terminal") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Reconcile returned %v, want a terminal error saying %q", err, tc.want)
			}
			stalled := conditions.Find(f.live(t), conditions.Stalled)
			if stalled == nil || stalled.Status != metav1.ConditionTrue || !strings.Contains(stalled.Message, tc.want) {
				t.Errorf("Stalled = %+v, want True saying %q", stalled, tc.want)
			}
			if n := f.counter.Count("create", tc.resource) + f.counter.Count("patch", tc.resource); n != 0 {
				t.Errorf("%d %s written, want none", n, tc.resource)
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
