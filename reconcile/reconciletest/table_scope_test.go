package reconciletest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	rkreconcile "github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// labeller is a reconciler of a cluster-scoped kind, Namespace: it labels each one
// reconciled: "yes".
type labeller struct{ c client.Client }

func (r labeller) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.c.Get(ctx, req.NamespacedName, ns); err != nil {
		return rtreconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ns.Labels["reconciled"] == "yes" {
		return rtreconcile.Result{}, nil
	}
	before := ns.DeepCopy()
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["reconciled"] = "yes"
	return rtreconcile.Result{}, r.c.Patch(ctx, ns, client.MergeFrom(before))
}

func TestATableChecksTheStatusOfAClusterScopedObject(t *testing.T) {
	table := ReconcilerTests{
		ControlPlane: StartAPIServer(t),
		Reconciler:   func(d Deps) rtreconcile.Reconciler { return labeller{c: d.Client} },
	}
	named := func() *corev1.Namespace {
		// Named after the case's namespace: an API server alone never finishes deleting one.
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "st-" + CaseNamespace}}
	}
	table.Cases = []ReconcilerTestCase{{
		Name:         "a Namespace is labelled",
		Object:       named(),
		WantRequests: []string{"patch namespaces"},
		WantStatus:   corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}}
	table.Run(t)

	t.Run("a wrong status is told, not a JSON error", func(t *testing.T) {
		rec := &errorRecorder{TB: t}
		table.RunCase(rec, ReconcilerTestCase{
			Name:         "wrong",
			Object:       named(),
			WantRequests: []string{"patch namespaces"},
			WantStatus:   corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
		})
		if msg := rec.message(); !strings.Contains(msg, "the status of Namespace st-") || !strings.Contains(msg, `"Active"`) {
			t.Errorf("a case wanting another status said:\n%s", msg)
		}
	})
}

// tenancy is a reconciler of a ConfigMap that stands for a tenant: it makes the tenant a
// namespace, t- followed by the ConfigMap's, with a ConfigMap of settings in it, and a
// ConfigMap named by generateName beside the tenant's.
type tenancy struct{ c client.Client }

func (r tenancy) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	tenant := &corev1.ConfigMap{}
	if err := r.c.Get(ctx, req.NamespacedName, tenant); err != nil {
		return rtreconcile.Result{}, client.IgnoreNotFound(err)
	}
	home := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t-" + tenant.Namespace, Labels: map[string]string{"team": tenant.Data["team"]}}}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: home.Name, Name: "settings"}, Data: tenant.Data}
	run := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tenant.Namespace, GenerateName: "run-"}}
	for _, obj := range []client.Object{home, settings, run} {
		if err := r.c.Create(ctx, obj); err != nil {
			return rtreconcile.Result{}, err
		}
	}
	return rtreconcile.Result{}, nil
}

func TestWantObjectsComparesObjectsOutsideTheCasesNamespace(t *testing.T) {
	table := ReconcilerTests{
		ControlPlane: StartAPIServer(t),
		Reconciler:   func(d Deps) rtreconcile.Reconciler { return tenancy{c: d.Client} },
	}
	tenant := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}, Data: map[string]string{"team": "blue"}}
	}
	home := "t-" + CaseNamespace
	want := []client.Object{
		tenant(),
		// A Namespace: the label the API server sets to its name is its own.
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: home, Labels: map[string]string{"team": "blue"}}},
		// A child in another namespace, made after the case's.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: home, Name: "settings"}, Data: map[string]string{"team": "blue"}},
		// A child named by generateName.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "run-"}},
	}
	writes := []string{"create namespaces", "create configmaps", "create configmaps"}
	table.Cases = []ReconcilerTestCase{{
		Name:         "a tenant gets a namespace with its settings",
		Object:       tenant(),
		WantRequests: writes,
		WantObjects:  want,
	}}
	table.Run(t)

	tests := []struct {
		name string
		tc   ReconcilerTestCase
		want []string
	}{{
		name: "an object in another namespace that the case does not want fails it",
		tc: ReconcilerTestCase{
			Object: tenant(), WantRequests: writes, WantObjects: want,
			Meanwhile: func(ctx context.Context, c client.Client, ns string) error {
				if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t-" + ns}}); err != nil {
					return err
				}
				return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "t-" + ns, Name: "stray"}})
			},
			WantErr: "already exists", // the reconciler's namespace: the case's Meanwhile made it
		},
		want: []string{"ConfigMap t-{namespace}/settings does not exist; WantObjects has it", "ConfigMap t-{namespace}/stray exists; WantObjects does not have it"},
	}, {
		name: "a wanted generateName child that does not exist fails the case",
		tc: ReconcilerTestCase{
			Object: tenant(), WantRequests: writes,
			WantObjects: append(want[:len(want):len(want)], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "run-"}}),
		},
		want: []string{`WantObjects: ConfigMap run-*: WantObjects has more objects named by generateName "run-" than the 1 that exist`},
	}, {
		name: "a Namespace's own labels are compared",
		tc: ReconcilerTestCase{
			Object: tenant(), WantRequests: writes,
			WantObjects: append([]client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: home, Labels: map[string]string{"team": "red"}}}}, want[2:]...),
		},
		want: []string{"Namespace t-", `"red"`, `"blue"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &errorRecorder{TB: t}
			tt.tc.Name = "failing"
			table.RunCase(rec, tt.tc)
			msg := rec.message()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the case said:\n%s\nwhich lacks %q", msg, w)
				}
			}
		})
	}
}

// holder holds each ConfigMap with a finalizer whose cleanup waits a minute, again and
// again: a deletion that is never done.
func holder() *rkreconcile.Controller[*corev1.ConfigMap] {
	return rkreconcile.For(&corev1.ConfigMap{}, rkreconcile.LogicFunc[*corev1.ConfigMap](
		func(context.Context, *corev1.ConfigMap, rkreconcile.Scope) requeue.Outcome { return requeue.Done() }), "holder").
		WithFinalizer(holdFinalizer, func(context.Context, *corev1.ConfigMap, rkreconcile.Scope) requeue.Outcome {
			return requeue.After(time.Minute)
		})
}

const holdFinalizer = "test.reconcilekit.io/hold"

// reconcilerFunc is a reconciler of a function.
type reconcilerFunc func(context.Context, rtreconcile.Request) (rtreconcile.Result, error)

func (f reconcilerFunc) Reconcile(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
	return f(ctx, req)
}

// A deletion made during a case happened at the case's Now, in the clock the reconciler
// reads, not at the API server's time, years before DefaultNow: a cleanup is overdue only
// once its deadline has passed on the case's clock.
func TestADeletionHappensInTheCasesTime(t *testing.T) {
	deleted := func(ctx context.Context, c client.Client, ns string) error {
		return c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"}})
	}
	held := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{holdFinalizer}}}
	}
	// With the clock stepped past the deadline before the reconcile, which a Controller's
	// table cannot do, the same deletion is overdue.
	late := func(d Deps) rtreconcile.Reconciler {
		inner := holder().Reconciler(d.Client, rkreconcile.WithClock(d.Clock), rkreconcile.WithRecorder(d.Recorder))
		return reconcilerFunc(func(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
			d.Clock.Step(rkreconcile.DefaultCleanupDeadline + time.Minute)
			return inner.Reconcile(ctx, req)
		})
	}
	cp := StartAPIServer(t)
	ReconcilerTests{ControlPlane: cp, Controller: holder(), Cases: []ReconcilerTestCase{{
		Name:       "a cleanup that waits is not overdue at once",
		Object:     held(),
		Meanwhile:  deleted,
		WantResult: rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		Name:       "at a Now of the case's own",
		Object:     held(),
		Now:        time.Date(2001, time.February, 3, 4, 5, 6, 0, time.UTC),
		Meanwhile:  deleted,
		WantResult: rtreconcile.Result{RequeueAfter: time.Minute},
	}}}.Run(t)
	ReconcilerTests{ControlPlane: cp, Reconciler: late, Cases: []ReconcilerTestCase{{
		Name:       "a cleanup past its deadline on the case's clock is overdue",
		Object:     held(),
		Meanwhile:  deleted,
		WantResult: rtreconcile.Result{RequeueAfter: time.Minute},
		WantEvents: []string{"Warning CleanupOverdue cleanup has not succeeded within 10m0s of the deletion (it is still waiting: after 1m0s): fix its cause, or annotate reconcilekit.io/skip-cleanup=true to delete without cleanup"},
	}}}.Run(t)
}
