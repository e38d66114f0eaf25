package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/phase"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// controlPlane is the package's, with its test CRDs, started by the first test that needs
// it: the tests of pure logic (backoff, coalescing, outcomes) run without one.
var controlPlane = clustertest.Lazy{Options: reconciletest.Options{CRDDirectories: []string{"testdata/crd"}}}

// cp is the package's control plane; under -short it skips t.
func cp(t testing.TB) *reconciletest.ControlPlane { t.Helper(); return controlPlane.Get(t) }

func TestMain(m *testing.M) { os.Exit(controlPlane.Main(m)) }

// finalizer is the finalizer of the reconcilers under test.
const finalizer = "test.reconcilekit.io/cleanup"

// now is the time on the tests' fake clocks.
var now = time.Date(2025, time.May, 1, 10, 0, 0, 0, time.UTC)

// fixture is a Widget in a namespace of the test's own, and what a reconciler of it is
// given and leaves behind: a counted client, a clock, its log and its events.
type fixture struct {
	widget  *Widget
	client  client.Client
	counter *reconciletest.Counter
	clock   *reconciletest.Clock
	logs    *logSink
	events  *events.FakeRecorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		widget:  &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: cp(t).Namespace(t), Name: "widget"}, Spec: WidgetSpec{Size: 1}},
		counter: &reconciletest.Counter{},
		clock:   reconciletest.NewClock(now),
		logs:    &logSink{},
		events:  events.NewFakeRecorder(10),
	}
	var err error
	if f.client, err = client.New(f.counter.Wrap(cp(t).Config), client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Create(t.Context(), f.widget); err != nil {
		t.Fatal(err)
	}
	f.counter.Reset()
	return f
}

// reconciler returns a Reconciler of the fixture's client, clock and event recorder.
func (f *fixture) reconciler(logic reconcile.LogicFunc[*Widget], opts ...reconcile.Option) reconcile.Shell[*Widget] {
	opts = append(opts, reconcile.WithClock(f.clock), reconcile.WithRecorder(f.events))
	return reconcile.NewShell(f.client, logic, opts...)
}

// declared returns the shell of d, with the fixture's client, clock and event recorder.
func (f *fixture) declared(d *reconcile.Controller[*Widget], opts ...reconcile.Option) reconcile.Shell[*Widget] {
	opts = append(opts, reconcile.WithClock(f.clock), reconcile.WithRecorder(f.events))
	return reconcile.ShellOf(f.client, d, opts...)
}

// declare declares the Widget controller of logic, writing as reconcile.TestFieldOwner.
func declare(logic reconcile.LogicFunc[*Widget]) *reconcile.Controller[*Widget] {
	return reconcile.For(&Widget{}, logic, reconcile.TestFieldOwner)
}

// reconcile reconciles the fixture's Widget once with r, logging into f.logs.
func (f *fixture) reconcile(t *testing.T, r reconcile.Shell[*Widget]) (ctrl.Result, error) {
	t.Helper()
	return r.Reconcile(f.context(t), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.widget)})
}

// context returns the test's context with a logger that logs into f.logs.
func (f *fixture) context(t *testing.T) context.Context {
	return log.IntoContext(t.Context(), logr.New(f.logs))
}

// live reads the fixture's Widget from the API server.
func (f *fixture) live(t *testing.T) *Widget {
	t.Helper()
	live := &Widget{}
	if err := f.client.Get(t.Context(), client.ObjectKeyFromObject(f.widget), live); err != nil {
		t.Fatal(err)
	}
	return live
}

// recorded returns the events recorded so far and forgets them.
func (f *fixture) recorded() []string {
	var recorded []string
	for {
		select {
		case e := <-f.events.Events:
			recorded = append(recorded, e)
		default:
			return recorded
		}
	}
}

// logSink is a logr.LogSink that keeps the errors logged, so that a test can tell a quiet
// requeue from an error in the log.
type logSink struct{ errors []string }

func (s *logSink) Init(logr.RuntimeInfo)          {}
func (s *logSink) Enabled(int) bool               { return true }
func (s *logSink) Info(int, string, ...any)       {}
func (s *logSink) WithValues(...any) logr.LogSink { return s }
func (s *logSink) WithName(string) logr.LogSink   { return s }

func (s *logSink) Error(err error, msg string, _ ...any) {
	s.errors = append(s.errors, msg+": "+err.Error())
}

// mustNotRun returns logic that fails the test if it runs.
func mustNotRun(t *testing.T, why string) reconcile.LogicFunc[*Widget] {
	return func(context.Context, *Widget, reconcile.Scope) requeue.Outcome {
		t.Error(why)
		return requeue.Done()
	}
}

func TestReconcileOfAMissingObjectIsNotAnError(t *testing.T) {
	f := newFixture(t)
	r := f.reconciler(mustNotRun(t, "the logic ran for a missing object"))
	missing := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: f.widget.Namespace, Name: "missing"}}
	result, err := r.Reconcile(f.context(t), missing)
	if err != nil || result != (ctrl.Result{}) {
		t.Errorf("Reconcile = %+v, %v; want a zero result and no error", result, err)
	}
	if n := f.counter.Writes(); n > 0 {
		t.Errorf("Reconcile of a missing object wrote %d times:\n%s", n, f.counter)
	}
}

func TestReconcileWritesAChangedStatusOnceAndAConvergedOneNever(t *testing.T) {
	f := newFixture(t)
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		w.Status.Phase = "Sized"
		conditions.MarkTrue(w, "Sized", "Sized", "size %d", w.Spec.Size)
		return requeue.Done()
	})

	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if n := f.counter.Count("patch", "widgets/status"); n != 1 || f.counter.Writes() != 1 {
		t.Errorf("the first reconcile made %d status patches; want one and no other write:\n%s", n, f.counter)
	}
	live := f.live(t)
	if live.Status.Phase != "Sized" || !conditions.IsTrue(live, conditions.Ready) {
		t.Errorf("status = %+v; want the logic's", live.Status)
	}
	if live.Status.ObservedGeneration != live.Generation {
		t.Errorf("observedGeneration = %d, want the generation, %d", live.Status.ObservedGeneration, live.Generation)
	}

	reconciletest.ExpectNoWrites(t, f.counter, func() {
		if _, err := f.reconcile(t, r); err != nil {
			t.Fatal(err)
		}
	})
}

func TestReconcileTurnsTheOutcomeIntoAResult(t *testing.T) {
	errBroken := errors.New("broken")
	tests := []struct {
		name         string
		outcome      requeue.Outcome
		want         ctrl.Result
		wantErr      error // matched with errors.Is
		wantEvents   []string
		wantErrorLog bool
	}{{
		name:    "done waits for a change",
		outcome: requeue.Done(),
	}, {
		name:    "a delay is kept",
		outcome: requeue.After(time.Minute),
		want:    ctrl.Result{RequeueAfter: time.Minute},
	}, {
		name:    "a time is measured on the injected clock",
		outcome: requeue.At(now.Add(90 * time.Second)),
		want:    ctrl.Result{RequeueAfter: 90 * time.Second},
	}, {
		name:       "a retry returns the error for backoff and records a warning",
		outcome:    requeue.Retry(errBroken),
		wantErr:    errBroken,
		wantEvents: []string{"Warning ReconcileError broken"},
	}, {
		name:         "a retry after a delay keeps the delay and logs the error instead of returning it",
		outcome:      requeue.RetryAfter(errBroken, 30*time.Second),
		want:         ctrl.Result{RequeueAfter: 30 * time.Second},
		wantEvents:   []string{"Warning ReconcileError broken"},
		wantErrorLog: true,
	}, {
		name:       "a terminal error is returned as terminal and records a warning",
		outcome:    requeue.Terminal(errBroken),
		wantErr:    crreconcile.TerminalError(nil),
		wantEvents: []string{"Warning ReconcileError broken"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.reconciler(func(context.Context, *Widget, reconcile.Scope) requeue.Outcome { return tt.outcome })

			result, err := f.reconcile(t, r)
			if result != tt.want {
				t.Errorf("result = %+v, want %+v", result, tt.want)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantEvents, f.recorded()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if logged := len(f.logs.errors) > 0; logged != tt.wantErrorLog {
				t.Errorf("errors logged: %q; want some: %t", f.logs.errors, tt.wantErrorLog)
			}
		})
	}
}

func TestReconcileSetsObservedGenerationOnlyOnceTheLogicHandledTheGeneration(t *testing.T) {
	f := newFixture(t)
	outcome := requeue.Done()
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		w.Status.Phase = fmt.Sprintf("Size%d", w.Spec.Size)
		return outcome
	})
	check := func(phase string, observed int64) {
		t.Helper()
		if live := f.live(t); live.Status.Phase != phase || live.Status.ObservedGeneration != observed {
			t.Errorf("phase %s, observedGeneration %d; want %s, %d", live.Status.Phase, live.Status.ObservedGeneration, phase, observed)
		}
	}

	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	check("Size1", 1)

	live := f.live(t)
	live.Spec.Size = 2
	if err := f.client.Update(t.Context(), live); err != nil {
		t.Fatal(err)
	}
	// A failed reconcile still records what it saw, but does not claim the new
	// generation.
	outcome = requeue.Retry(errors.New("broken"))
	if _, err := f.reconcile(t, r); err == nil {
		t.Fatal("the logic's error was not returned")
	}
	check("Size2", 1)

	outcome = requeue.Done()
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	check("Size2", 2)
}

func TestReconcileRequeuesQuietlyWhenTheObjectChangedSinceItWasRead(t *testing.T) {
	f := newFixture(t)
	someoneElse := cp(t).Client(t, scheme)
	r := f.reconciler(func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		changed := w.DeepCopyObject().(*Widget)
		changed.Labels = map[string]string{"changed-by": "someone-else"}
		if err := someoneElse.Update(ctx, changed); err != nil {
			t.Error(err)
		}
		w.Status.Phase = "Stale"
		return requeue.Done()
	})

	result, err := f.reconcile(t, r)
	if err != nil || result.RequeueAfter <= 0 {
		t.Errorf("Reconcile = %+v, %v; want a requeue after a delay and no error", result, err)
	}
	if f.counter.Count("patch", "widgets/status") != 1 {
		t.Errorf("want one status patch, the one refused:\n%s", f.counter)
	}
	if live := f.live(t); live.Status.Phase != "" {
		t.Errorf("phase = %q; a status read before someone else's write overwrote it", live.Status.Phase)
	}
	if len(f.logs.errors) > 0 {
		t.Errorf("a conflict logged errors: %q", f.logs.errors)
	}
	if events := f.recorded(); len(events) > 0 {
		t.Errorf("a conflict recorded events: %q", events)
	}
}

func TestReconcileOfAnObjectDeletedWhileTheLogicRanIsNotAnError(t *testing.T) {
	f := newFixture(t)
	r := f.reconciler(func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		if err := cp(t).Client(t, scheme).Delete(ctx, w.DeepCopyObject().(*Widget)); err != nil {
			t.Error(err)
		}
		w.Status.Phase = "Gone"
		return requeue.Done()
	})
	result, err := f.reconcile(t, r)
	if err != nil || result != (ctrl.Result{}) {
		t.Errorf("Reconcile = %+v, %v; want a zero result and no error", result, err)
	}
}

func TestReconcileAddsTheFinalizerBeforeTheLogicFirstRuns(t *testing.T) {
	f := newFixture(t)
	ran := false
	r := f.declared(declare(func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		ran = true
		stored := &Widget{}
		if err := cp(t).Client(t, scheme).Get(ctx, client.ObjectKeyFromObject(w), stored); err != nil {
			t.Fatal(err)
		}
		if !controllerutil.ContainsFinalizer(stored, finalizer) {
			t.Errorf("the logic ran before the finalizer was stored: %q", stored.Finalizers)
		}
		return requeue.Done()
	}).WithFinalizer(finalizer, mustNotRun(t, "cleanup ran for an object not being deleted")))

	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if !ran {
		t.Error("the logic did not run")
	}
}

func TestReconcileCleansUpADeletedObjectUntilCleanupIsDone(t *testing.T) {
	f := newFixture(t)
	logicRuns, cleanups := 0, 0
	cleanup := requeue.After(time.Minute)
	r := f.declared(declare(func(context.Context, *Widget, reconcile.Scope) requeue.Outcome {
		logicRuns++
		return requeue.Done()
	}).WithFinalizer(finalizer, func(context.Context, *Widget, reconcile.Scope) requeue.Outcome {
		cleanups++
		return cleanup
	}))
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(t.Context(), f.widget); err != nil {
		t.Fatal(err)
	}

	// Cleanup that is not done keeps the object, and says when to look again.
	result, err := f.reconcile(t, r)
	if err != nil || result != (ctrl.Result{RequeueAfter: time.Minute}) {
		t.Errorf("Reconcile = %+v, %v; want cleanup's requeue after 1m", result, err)
	}
	if live := f.live(t); !controllerutil.ContainsFinalizer(live, finalizer) {
		t.Errorf("finalizers = %q before cleanup was done", live.Finalizers)
	}

	// Cleanup that is done lets the deletion complete.
	cleanup = requeue.Done()
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	err = f.client.Get(t.Context(), client.ObjectKeyFromObject(f.widget), &Widget{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Get after cleanup = %v, want NotFound", err)
	}
	if logicRuns != 1 || cleanups != 2 {
		t.Errorf("the logic ran %d times and cleanup %d; want once before the deletion, and cleanup twice after", logicRuns, cleanups)
	}
}

func TestReconcileReportsACleanupPastItsDeadlineOnceAndLetsAPersonEndIt(t *testing.T) {
	f := newFixture(t)
	cleanups := 0
	r := f.declared(declare(func(context.Context, *Widget, reconcile.Scope) requeue.Outcome { return requeue.Done() }).
		WithFinalizer(finalizer, func(context.Context, *Widget, reconcile.Scope) requeue.Outcome {
			cleanups++
			return requeue.Retry(errors.New("the bucket is locked"))
		}), reconcile.WithCleanupDeadline(time.Minute))
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(t.Context(), f.widget); err != nil {
		t.Fatal(err)
	}
	deleted := f.live(t).DeletionTimestamp.Time
	f.recorded()

	steps := []struct {
		name       string
		at         time.Duration // after the deletion
		wantWrites int
		wantEvents []string
	}{
		{"a cleanup failing within its deadline is retried, Reconciling Retrying written once", 30 * time.Second, 1, nil},
		{"past its deadline, Stalled and a Warning, once", 2 * time.Minute, 1, []string{"Warning CleanupOverdue"}},
		{"still failing later: retried, nothing written again", time.Hour, 0, nil},
	}
	for _, step := range steps {
		f.clock.SetTime(deleted.Add(step.at))
		f.counter.Reset()
		if _, err := f.reconcile(t, r); err == nil {
			t.Errorf("%s: Reconcile returned no error; want the cleanup's, retried", step.name)
		}
		events := f.recorded()
		var warnings []string
		for _, e := range events {
			if strings.HasPrefix(e, "Warning CleanupOverdue") {
				warnings = append(warnings, "Warning CleanupOverdue")
			}
		}
		if f.counter.Writes() != step.wantWrites || !slices.Equal(warnings, step.wantEvents) {
			t.Errorf("%s: %d writes and events %q; want %d writes and %q", step.name, f.counter.Writes(), events, step.wantWrites, step.wantEvents)
		}
	}
	stalled := conditions.Find(f.live(t), conditions.Stalled)
	if stalled == nil || stalled.Reason != reconcile.ReasonCleanupOverdue ||
		!strings.Contains(stalled.Message, "the bucket is locked") || !strings.Contains(stalled.Message, reconcile.SkipCleanupAnnotation) {
		t.Errorf("Stalled = %+v; want CleanupOverdue naming the cleanup's error and the annotation that ends it", stalled)
	}

	// A person ends it: the deletion completes without running the cleanup again.
	live := f.live(t)
	live.Annotations = map[string]string{reconcile.SkipCleanupAnnotation: "true"}
	if err := f.client.Update(t.Context(), live); err != nil {
		t.Fatal(err)
	}
	before := cleanups
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Get(t.Context(), client.ObjectKeyFromObject(f.widget), &Widget{}); !apierrors.IsNotFound(err) || cleanups != before {
		t.Errorf("after %s: Get = %v, cleanup ran %d more times; want NotFound and none", reconcile.SkipCleanupAnnotation, err, cleanups-before)
	}
	if events := f.recorded(); len(events) != 1 || !strings.HasPrefix(events[0], "Warning CleanupSkipped") {
		t.Errorf("events %q; want one Warning CleanupSkipped", events)
	}
}

func TestReconcileLetsADeletionGoOnWhenItsNamespaceIsBeingDeleted(t *testing.T) {
	f := newFixture(t)
	builtins := cp(t).Client(t, withBuiltins)
	r := f.declared(declare(func(context.Context, *Widget, reconcile.Scope) requeue.Outcome { return requeue.Done() }).
		WithFinalizer(finalizer, func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
			// A cleanup that needs a Job, say, in the object's namespace.
			job := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: "cleanup"}}
			if err := builtins.Create(ctx, job); err != nil {
				return requeue.Retry(fmt.Errorf("creating the cleanup's ConfigMap: %w", err))
			}
			return requeue.After(time.Minute)
		}))
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(t.Context(), f.widget); err != nil {
		t.Fatal(err)
	}
	// The API server alone has no namespace controller: the namespace stays Terminating
	// and refuses new objects, as a cluster's does while it empties it.
	if err := builtins.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.widget.Namespace}}); err != nil {
		t.Fatal(err)
	}
	f.recorded()
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Get(t.Context(), client.ObjectKeyFromObject(f.widget), &Widget{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get = %v; want NotFound: a cleanup that cannot create in a namespace being deleted must not hold the deletion", err)
	}
	if events := f.recorded(); len(events) != 1 || !strings.HasPrefix(events[0], "Warning CleanupAbandoned") {
		t.Errorf("events %q; want one Warning CleanupAbandoned", events)
	}
}

func TestReconcileRunsNothingForAnObjectBeingDeletedWithoutItsFinalizer(t *testing.T) {
	tests := []struct {
		name      string
		finalizer bool
	}{
		{name: "a reconciler without a finalizer"},
		{name: "a reconciler whose finalizer the object no longer has", finalizer: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			// Someone else's finalizer keeps the object while it is being deleted.
			live := f.live(t)
			live.Finalizers = []string{"test.reconcilekit.io/someone-else"}
			if err := f.client.Update(t.Context(), live); err != nil {
				t.Fatal(err)
			}
			if err := f.client.Delete(t.Context(), live); err != nil {
				t.Fatal(err)
			}
			f.counter.Reset()

			d := declare(mustNotRun(t, "the logic ran for an object being deleted"))
			if tt.finalizer {
				d = d.WithFinalizer(finalizer, mustNotRun(t, "cleanup ran without the finalizer"))
			}
			r := f.declared(d)
			result, err := f.reconcile(t, r)
			if err != nil || result != (ctrl.Result{}) {
				t.Errorf("Reconcile = %+v, %v; want a zero result and no error", result, err)
			}
			if n := f.counter.Writes(); n > 0 {
				t.Errorf("Reconcile wrote %d times:\n%s", n, f.counter)
			}
		})
	}
}

// newMachine returns a phase.Machine of phases that starts in PENDING.
func newMachine(t testing.TB, phases map[string]phase.State[*Widget]) *phase.Machine[*Widget] {
	t.Helper()
	m, err := phase.New("PENDING", phases)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// moveTo returns a phase handler that moves to next ("" to stay) with outcome.
func moveTo(next string, outcome requeue.Outcome) func(context.Context, *Widget, reconcile.Scope) (string, requeue.Outcome) {
	return func(context.Context, *Widget, reconcile.Scope) (string, requeue.Outcome) { return next, outcome }
}

// progress returns what a phase.Machine told the shell of w: "Reconciling Reason",
// "Stalled Reason" or "Ready" when it set neither.
func progress(w *Widget) string {
	for _, typ := range []string{conditions.Stalled, conditions.Reconciling} {
		if c := conditions.Find(w, typ); c != nil && c.Status == "True" {
			return typ + " " + c.Reason
		}
	}
	return "Ready"
}

func TestMachineThroughTheShellWritesNothingOnceConverged(t *testing.T) {
	f := newFixture(t)
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: moveTo("RUNNING", requeue.Done()), Next: []string{"RUNNING"}},
		"RUNNING": {Handle: moveTo("", requeue.After(time.Minute)), Next: []string{"DONE"}},
		"DONE":    {},
	})
	r := f.reconciler(m.Reconcile)

	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	live := f.live(t)
	if got := progress(live); live.Status.Phase != "RUNNING" || got != "Reconciling Running" || conditions.IsTrue(live, conditions.Ready) {
		t.Errorf("phase %s, %s; want RUNNING, Reconciling Running and not Ready", live.Status.Phase, got)
	}

	reconciletest.ExpectNoWrites(t, f.counter, func() {
		result, err := f.reconcile(t, r)
		if err != nil || result != (ctrl.Result{RequeueAfter: time.Minute}) {
			t.Errorf("Reconcile = %+v, %v; want a requeue after 1m", result, err)
		}
	})
}

func TestReconcilePausesAnObjectOnEitherTriggerAndResumesWhenItGoes(t *testing.T) {
	annotated := func(w *Widget, on bool) {
		w.Annotations = nil
		if on {
			w.Annotations = map[string]string{reconcile.PausedAnnotation: "true"}
		}
	}
	suspended := func(w *Widget, on bool) { w.Spec.Suspend = on }
	tests := []struct {
		name    string
		trigger func(w *Widget, on bool)
		reason  string
	}{
		{"the pause annotation", annotated, reconcile.ReasonPausedByAnnotation},
		{"the spec's suspend switch", suspended, reconcile.ReasonSuspended},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			runs := 0
			r := f.declared(declare(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				runs++
				w.Status.Phase = fmt.Sprintf("Size%d", w.Spec.Size)
				return requeue.Done()
			}).WithSuspend(func(w *Widget) bool { return w.Spec.Suspend }))
			edit := func(change func(*Widget)) {
				t.Helper()
				live := f.live(t)
				change(live)
				if err := f.client.Update(t.Context(), live); err != nil {
					t.Fatal(err)
				}
			}

			edit(func(w *Widget) { tt.trigger(w, true) })
			f.counter.Reset()
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			live := f.live(t)
			if c := conditions.Find(live, reconcile.Paused); runs != 0 || c == nil || c.Status != "True" || c.Reason != tt.reason {
				t.Errorf("logic ran %d times, Paused = %+v; want no run and Paused=True because %s", runs, c, tt.reason)
			}
			if n := f.counter.Writes(); n != 1 {
				t.Errorf("pausing wrote %d times, want the status once:\n%s", n, f.counter)
			}
			if events := f.recorded(); len(events) != 1 || !strings.Contains(events[0], tt.reason) {
				t.Errorf("pausing recorded events %v, want one, %s", events, tt.reason)
			}
			// Spec edits while paused move the generation, yet nothing is written, status and
			// events included, whatever is edited.
			for size := range 3 {
				edit(func(w *Widget) { w.Spec.Size = int32(size) + 2 })
				reconciletest.ExpectNoWrites(t, f.counter, func() {
					if _, err := f.reconcile(t, r); err != nil {
						t.Fatal(err)
					}
				})
			}
			if events := f.recorded(); len(events) != 0 {
				t.Errorf("while paused, events %v were recorded, want none", events)
			}

			edit(func(w *Widget) { tt.trigger(w, false) })
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			if live := f.live(t); runs != 1 || conditions.Find(live, reconcile.Paused) != nil || live.Status.Phase != "Size4" {
				t.Errorf("after resuming: logic ran %d times, conditions %+v; want one run and no Paused", runs, live.Status.Conditions)
			}
		})
	}
}

func TestReconcileRecordsAReconcileRequestOnceTheLogicHandledIt(t *testing.T) {
	f := newFixture(t)
	var fail error
	runs := 0
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		runs++
		w.Status.Phase = "Sized"
		if fail != nil {
			return requeue.Retry(fail)
		}
		return requeue.Done()
	}, reconcile.WithReconcileRequests(""))
	request := func(value string, paused bool) {
		t.Helper()
		live := f.live(t)
		live.Annotations = map[string]string{reconcile.RequestedAtAnnotation: value}
		if paused {
			live.Annotations[reconcile.PausedAnnotation] = "true"
		}
		if err := f.client.Update(t.Context(), live); err != nil {
			t.Fatal(err)
		}
		f.counter.Reset()
		_, _ = f.reconcile(t, r)
	}
	if _, err := f.reconcile(t, r); err != nil { // converged: nothing asked yet
		t.Fatal(err)
	}

	steps := []struct {
		name        string
		value       string
		paused      bool
		fail        error
		wantHandled string
		wantWrites  int
	}{
		{"a request of a converged object is handled: the logic runs, one status write", "1", false, nil, "1", 1},
		{"the same request again is not news: no write", "1", false, nil, "1", 0},
		{"a request whose reconcile fails and is retried is not handled yet", "2", false, errors.New("boom"), "1", 1},
		{"its retry that succeeds handles it", "2", false, nil, "2", 1},
		{"a paused object handles nothing, it runs nothing", "3", true, nil, "2", 1},
	}
	for _, step := range steps {
		fail = step.fail
		before := runs
		request(step.value, step.paused)
		live := f.live(t)
		if live.Status.LastHandledReconcileAt != step.wantHandled || f.counter.Writes() != step.wantWrites {
			t.Errorf("%s: lastHandledReconcileAt %q after %d writes, want %q after %d:\n%s",
				step.name, live.Status.LastHandledReconcileAt, f.counter.Writes(), step.wantHandled, step.wantWrites, f.counter)
		}
		if ran := runs - before; step.paused == (ran != 0) {
			t.Errorf("%s: the logic ran %d times", step.name, ran)
		}
	}
}
