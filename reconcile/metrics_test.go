package reconcile_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// series returns the reconcilekit_condition series of the object in namespace, as
// "type=status" lines, gathered from controller-runtime's registry as a scrape sees it.
func series(t *testing.T, namespace string) []string {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() != "reconcilekit_condition" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == namespace && labels["kind"] == "Widget" {
				got = append(got, labels["type"]+"="+labels["status"])
			}
		}
	}
	return got
}

func TestShellKeepsOneSeriesPerConditionAndDropsThemWithTheObject(t *testing.T) {
	f := newFixture(t)
	sized := "True"
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		if sized == "True" {
			conditions.MarkTrue(w, "Sized", "Sized", "sized")
		} else {
			conditions.MarkFalse(w, "Sized", "Resizing", "resizing")
		}
		return requeue.Done()
	})
	done := testutil.ToFloat64(telemetry.Reconciles.WithLabelValues("Widget", telemetry.Done))
	changedStatus := testutil.ToFloat64(telemetry.Writes.WithLabelValues("Widget", telemetry.Status, "true"))

	steps := []struct {
		name   string
		sized  string
		delete bool
		want   string
	}{
		{name: "a new object gets a series per condition", sized: "True", want: "Ready=True Sized=True"},
		{name: "a converged object keeps them", sized: "True", want: "Ready=True Sized=True"},
		{name: "a condition that changes status moves to the other series", sized: "False", want: "Ready=False Reconciling=True Sized=False"},
		{name: "a deleted object takes its series with it", delete: true, want: ""},
	}
	for _, step := range steps {
		sized = step.sized
		if step.delete {
			if err := f.client.Delete(t.Context(), f.widget); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.reconcile(t, r); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got := series(t, f.widget.Namespace)
		slices.Sort(got)
		if strings.Join(got, " ") != step.want {
			t.Errorf("%s: series %q, want %q", step.name, strings.Join(got, " "), step.want)
		}
	}
	if n := testutil.ToFloat64(telemetry.Reconciles.WithLabelValues("Widget", telemetry.Done)) - done; n != 3 {
		t.Errorf("reconcilekit_reconciles_total{outcome=done} grew by %v, want 3", n)
	}
	if n := testutil.ToFloat64(telemetry.Writes.WithLabelValues("Widget", telemetry.Status, "true")) - changedStatus; n != 2 {
		t.Errorf("reconcilekit_writes_total{write=status,changed=true} grew by %v, want 2 (the converged reconcile writes nothing)", n)
	}
}

func TestConditionSeriesFollowTheNewestShellOfAKindAndGoWithTheirShell(t *testing.T) {
	f := newFixture(t)
	status := "True"
	logic := func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		if status == "True" {
			conditions.MarkTrue(w, "Sized", "Sized", "sized")
		} else {
			conditions.MarkFalse(w, "Sized", "Resizing", "resizing")
		}
		return requeue.Done()
	}
	check := func(step, want string) {
		t.Helper()
		got := series(t, f.widget.Namespace)
		slices.Sort(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%s: series %q, want %q", step, strings.Join(got, " "), want)
		}
	}
	reconcileWith := func(r reconcile.Shell[*Widget]) {
		t.Helper()
		if _, err := f.reconcile(t, r); err != nil {
			t.Fatal(err)
		}
	}

	// A manager started again in one process: the old shell still holds the object.
	old := f.reconciler(logic)
	reconcileWith(old)
	check("one shell", "Ready=True Sized=True")
	status = "False"
	newer := f.reconciler(logic)
	reconcileWith(newer)
	check("a second shell of the kind reports the object once, as it saw it", "Ready=False Reconciling=True Sized=False")

	// Deleted: the newer shell's reconcile takes the older one's series too.
	if err := f.client.Delete(t.Context(), f.widget); err != nil {
		t.Fatal(err)
	}
	reconcileWith(newer)
	check("the object deleted", "")
	runtime.KeepAlive(old)

	// A shell that is gone takes its series with it.
	if err := f.client.Create(t.Context(), &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.widget.Namespace, Name: f.widget.Name}, Spec: f.widget.Spec}); err != nil {
		t.Fatal(err)
	}
	status = "True"
	reconcileWith(f.reconciler(logic))
	check("a new shell", "Ready=True Sized=True")
	runtime.GC()
	check("its shell gone", "")
}

func TestShellBacksOffFromAStatusTheServerDoesNotKeep(t *testing.T) {
	f := newFixture(t)
	// What a webhook or a defaulting that rewrites the status back would do: the server
	// keeps the status it had, whatever the shell sends.
	base, err := client.NewWithWatch(f.counter.Wrap(cp(t).Config), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(base, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, _ client.Patch, opts ...client.SubResourcePatchOption) error {
			return c.SubResource(sub).Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte("{}")), opts...)
		},
	})
	r := reconcile.NewShell(c, reconcile.LogicFunc[*Widget](func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		w.Status.Phase = "Sized"
		return requeue.Done()
	}), reconcile.WithRecorder(f.events), reconcile.WithClock(f.clock))
	var detected int
	var writes int
	for round := 1; round <= 10; round++ {
		f.counter.Reset()
		result, err := f.reconcile(t, r)
		writes += f.counter.Count("patch", "widgets/status")
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if detected == 0 && result.RequeueAfter > 0 {
			detected = round
			if result.RequeueAfter < fight.FirstBackoff/2 {
				t.Errorf("requeued after %v, want about %v", result.RequeueAfter, fight.FirstBackoff)
			}
		}
	}
	t.Logf("status fight detected at reconcile %d; %d status writes in 10 reconciles", detected, writes)
	if detected == 0 || detected > fight.NoOps+1 || writes > fight.NoOps+1 {
		t.Errorf("detected at reconcile %d after %d writes, want within %d", detected, writes, fight.NoOps+1)
	}
	var warned bool
	for _, e := range f.recorded() {
		warned = warned || strings.HasPrefix(e, "Warning Fighting")
	}
	if !warned {
		t.Error("no Warning Fighting event on the object")
	}
}

func TestShellBacksOffFromAWriterThatResetsItsStatus(t *testing.T) {
	f := newFixture(t)
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		w.Status.Phase = "Sized"
		return requeue.Done()
	}, reconcile.OverrideFieldOwner("widget-controller"))
	// Another controller that owns the phase too, as a second operator installed for the
	// same kind would: before each reconcile it sets the phase back, taking the field.
	reset := func() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "test.reconcilekit.io", Version: "v1", Kind: "Widget"})
		u.SetNamespace(f.widget.Namespace)
		u.SetName(f.widget.Name)
		if err := unstructured.SetNestedField(u.Object, "Broken", "status", "phase"); err != nil {
			t.Fatal(err)
		}
		if err := f.client.SubResource("status").Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner("phase-setter"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	fights := testutil.ToFloat64(telemetry.Fights.WithLabelValues("Widget", telemetry.Status))
	var writes, detected int
	var events []string
	for round := 1; round <= 10; round++ {
		reset()
		f.counter.Reset()
		result, err := f.reconcile(t, r)
		writes += f.counter.Count("patch", "widgets/status")
		events = append(events, f.recorded()...)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if detected == 0 && result.RequeueAfter > 0 {
			detected = round
		}
	}
	t.Logf("status fight detected at reconcile %d; %d status writes in 10 rounds of the other writer", detected, writes)
	// Each write changes the object (it puts the phase back): only the reverts tell.
	if detected == 0 || detected > fight.Reverts || writes > fight.Reverts {
		t.Errorf("detected at reconcile %d after %d writes, want within %d", detected, writes, fight.Reverts)
	}
	if n := testutil.ToFloat64(telemetry.Fights.WithLabelValues("Widget", telemetry.Status)) - fights; n != 1 {
		t.Errorf("reconcilekit_fights_total{write=status} grew by %v, want 1", n)
	}
	var warning string
	for _, e := range events {
		if strings.HasPrefix(e, "Warning Fighting") {
			warning = e
		}
	}
	if !strings.Contains(warning, "field manager phase-setter") || !strings.Contains(warning, `status.phase: "Broken" → "Sized"`) {
		t.Errorf("Warning Fighting event %q, want one naming phase-setter and status.phase", warning)
	}
	t.Log(warning)
}

// A manager's shell reports the conditions of the objects its cache holds, read where
// they are: from the informer's store for a cache of every namespace, listed from the
// cache of each namespace otherwise. It keeps no copy of them between scrapes.
func TestConditionSeriesOfAManagersShellAreItsCachedObjects(t *testing.T) {
	tests := []struct {
		name  string
		cache func(namespace string) cache.Options
	}{
		{"a cache of every namespace", func(string) cache.Options { return cache.Options{} }},
		{"a cache of one namespace", func(ns string) cache.Options {
			return cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := cp(t).Namespace(t)
			sized := reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](func(_ context.Context, w *Widget, _ reconcile.Scope) requeue.Outcome {
				conditions.MarkTrue(w, "Sized", "Sized", "sized")
				return requeue.Done()
			}), "sizer")
			reconciletest.StartManager(t, cp(t).Config, reconcile.Manager{
				Options:     manager.Options{Scheme: scheme, Cache: tt.cache(ns)},
				Controllers: []reconcile.Declaration{sized},
			})
			c := cp(t).Client(t, scheme)
			w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: WidgetSpec{Size: 1}}
			if err := c.Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			await := func(want string) {
				t.Helper()
				reconciletest.Eventually(t, func(context.Context) error {
					got := series(t, ns)
					slices.Sort(got)
					if strings.Join(got, " ") != want {
						return fmt.Errorf("series %q, want %q", strings.Join(got, " "), want)
					}
					return nil
				})
			}
			await("Ready=True Sized=True")
			if err := c.Delete(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			await("")
		})
	}
}
