package reconcile_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// TestReconcileWritesWhatTheCleanupSaysWhileTheObjectIsDeleted deletes a Widget whose
// cleanup says different things in turn, reconciling each on the real API server with its
// requests counted: each change of what the cleanup says is written once, before its
// deadline and after, and a cleanup that says the same again, even an hour later, costs no
// write.
func TestReconcileWritesWhatTheCleanupSaysWhileTheObjectIsDeleted(t *testing.T) {
	f := newFixture(t)
	var cleanup func(w *Widget) requeue.Outcome
	r := f.declared(declare(func(context.Context, *Widget, reconcile.Scope) requeue.Outcome { return requeue.Done() }).
		WithFinalizer(finalizer, func(_ context.Context, w *Widget, _ reconcile.Scope) requeue.Outcome { return cleanup(w) }),
		reconcile.WithCleanupDeadline(2*time.Hour))
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(t.Context(), f.widget); err != nil {
		t.Fatal(err)
	}
	deleted := f.live(t).DeletionTimestamp.Time
	f.recorded()

	waiting := func(*Widget) requeue.Outcome { return requeue.After(time.Minute) }
	failing := func(*Widget) requeue.Outcome { return requeue.Retry(errors.New("the bucket is locked")) }
	blocked := func(w *Widget) requeue.Outcome {
		conditions.MarkTrue(w, conditions.Stalled, "ClaimsLeft", "namespace tenant-x still holds claims data, logs")
		return requeue.After(time.Minute)
	}
	terminal := func(*Widget) requeue.Outcome { return requeue.Terminal(errors.New("the bucket is gone for good")) }
	steps := []struct {
		name       string
		at         time.Duration // after the deletion
		cleanup    func(*Widget) requeue.Outcome
		wantWrites int
		want       string // the condition Ready's reason comes from: Type/Reason
		wantEvent  string // a Warning's reason, recorded at this step
	}{
		{"waiting: Reconciling CleaningUp", time.Second, waiting, 1, "Reconciling/" + reconcile.ReasonCleaningUp, ""},
		{"waiting again: nothing new", time.Minute, waiting, 0, "Reconciling/" + reconcile.ReasonCleaningUp, ""},
		{"failing: Reconciling Retrying", 2 * time.Minute, failing, 1, "Reconciling/" + reconcile.ReasonRetrying, ""},
		{"failing an hour on: nothing new", time.Hour, failing, 0, "Reconciling/" + reconcile.ReasonRetrying, ""},
		{"the cleanup marks Stalled: its reason, and a Warning", 61 * time.Minute, blocked, 1, "Stalled/ClaimsLeft", "ClaimsLeft"},
		{"marked the same again: nothing new", 90 * time.Minute, blocked, 0, "Stalled/ClaimsLeft", ""},
		{"terminal: Stalled TerminalError", 100 * time.Minute, terminal, 1, "Stalled/" + reconcile.ReasonTerminalError, ""},
		{"past the deadline: CleanupOverdue replaces Stalled", 3 * time.Hour, blocked, 1, "Stalled/" + reconcile.ReasonCleanupOverdue, reconcile.ReasonCleanupOverdue},
		{"past the deadline, later, failing: nothing new", 5 * time.Hour, failing, 0, "Stalled/" + reconcile.ReasonCleanupOverdue, ""},
	}
	for _, step := range steps {
		f.clock.SetTime(deleted.Add(step.at))
		cleanup = step.cleanup
		f.counter.Reset()
		_, _ = f.reconcile(t, r) // its result is the cleanup's outcome's, tested elsewhere
		var warnings []string
		for _, e := range f.recorded() {
			if fields := strings.Fields(e); len(fields) > 1 && fields[0] == "Warning" && fields[1] != "ReconcileError" {
				warnings = append(warnings, fields[1])
			}
		}
		live := f.live(t)
		ready := conditions.Find(live, conditions.Ready)
		got := ""
		for _, typ := range []string{conditions.Stalled, conditions.Reconciling} {
			if c := conditions.Find(live, typ); c != nil && c.Status == metav1.ConditionTrue && got == "" {
				got = typ + "/" + c.Reason
			}
		}
		var wantEvents []string
		if step.wantEvent != "" {
			wantEvents = []string{step.wantEvent}
		}
		if f.counter.Writes() != step.wantWrites || got != step.want || ready == nil || ready.Status != metav1.ConditionFalse || !slices.Equal(warnings, wantEvents) {
			t.Errorf("%s: %d writes, %s, Ready %+v, Warnings %q; want %d writes, %s, Ready False, Warnings %q",
				step.name, f.counter.Writes(), got, ready, warnings, step.wantWrites, step.want, wantEvents)
		}
		if !controllerutil.ContainsFinalizer(live, finalizer) {
			t.Fatalf("%s: the finalizer is gone before the cleanup was done", step.name)
		}
	}
}

// TestReconcileWritesTheStatusBeforeItRemovesTheFinalizer ends a cleanup on an object another
// finalizer still holds: the status the cleanup leaves is written first, then the finalizer
// goes, and the object, still there, says it is no longer waiting for this cleanup. With
// no other finalizer the object goes with it and nothing but the finalizer is written.
func TestReconcileWritesTheStatusBeforeItRemovesTheFinalizer(t *testing.T) {
	tests := []struct {
		name       string
		other      bool // another finalizer holds the object
		wantWrites int
	}{
		{name: "held by another finalizer: status, then the finalizer", other: true, wantWrites: 2},
		{name: "the last finalizer: the finalizer alone", wantWrites: 1},
	}
	const other = "test.reconcilekit.io/other"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			done := false
			r := f.declared(declare(func(context.Context, *Widget, reconcile.Scope) requeue.Outcome { return requeue.Done() }).
				WithFinalizer(finalizer, func(context.Context, *Widget, reconcile.Scope) requeue.Outcome {
					if done {
						return requeue.Done()
					}
					return requeue.After(time.Minute)
				}))
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			if tt.other {
				live := f.live(t)
				controllerutil.AddFinalizer(live, other)
				if err := f.client.Update(t.Context(), live); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { // let the namespace's deletion take it
					live := &Widget{}
					if err := f.client.Get(context.Background(), client.ObjectKeyFromObject(f.widget), live); err == nil {
						controllerutil.RemoveFinalizer(live, other)
						_ = f.client.Update(context.Background(), live)
					}
				})
			}
			if err := f.client.Delete(t.Context(), f.widget); err != nil {
				t.Fatal(err)
			}
			if _, err := f.reconcile(t, r); err != nil { // waiting: CleaningUp written
				t.Fatal(err)
			}
			done = true
			f.counter.Reset()
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			live := &Widget{}
			err := f.client.Get(t.Context(), client.ObjectKeyFromObject(f.widget), live)
			if !tt.other {
				if !apierrors.IsNotFound(err) {
					t.Errorf("Get = %v; want NotFound", err)
				}
			} else if err != nil || controllerutil.ContainsFinalizer(live, finalizer) || !conditions.IsTrue(live, conditions.Ready) || conditions.Find(live, conditions.Reconciling) != nil {
				t.Errorf("Get = %v, finalizers %q, conditions %+v; want the object, without the finalizer, Ready and not Reconciling", err, live.Finalizers, live.Status.Conditions)
			}
			if f.counter.Writes() != tt.wantWrites {
				t.Errorf("%d writes; want %d", f.counter.Writes(), tt.wantWrites)
			}
		})
	}
}

// TestReconcileToleratesAnObjectChangedOrGoneWhileItsCleanupRuns has someone else change, or
// release and so delete, the object while its cleanup runs: the status write that follows
// meets a conflict, a quiet requeue whose next reconcile writes the status, or NotFound, the
// end of the deletion; neither is an error nor an error's retry.
func TestReconcileToleratesAnObjectChangedOrGoneWhileItsCleanupRuns(t *testing.T) {
	tests := []struct {
		name       string
		meanwhile  func(live *Widget) // done to the object by someone else during the cleanup
		wantResult ctrl.Result
		wantGone   bool
	}{
		{
			name:       "changed: a quiet requeue",
			meanwhile:  func(live *Widget) { live.Annotations = map[string]string{"touched": "yes"} },
			wantResult: ctrl.Result{RequeueAfter: 200 * time.Millisecond},
		},
		{
			name:       "released and gone: done",
			meanwhile:  func(live *Widget) { live.Finalizers = nil },
			wantResult: ctrl.Result{},
			wantGone:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			meddle := false
			r := f.declared(declare(func(context.Context, *Widget, reconcile.Scope) requeue.Outcome { return requeue.Done() }).
				WithFinalizer(finalizer, func(ctx context.Context, w *Widget, _ reconcile.Scope) requeue.Outcome {
					if meddle {
						meddle = false
						live := &Widget{}
						if err := f.client.Get(ctx, client.ObjectKeyFromObject(w), live); err != nil {
							t.Fatal(err)
						}
						tt.meanwhile(live)
						if err := f.client.Update(ctx, live); err != nil {
							t.Fatal(err)
						}
					}
					return requeue.After(time.Minute)
				}))
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			if err := f.client.Delete(t.Context(), f.widget); err != nil {
				t.Fatal(err)
			}
			meddle = true
			result, err := f.reconcile(t, r)
			if err != nil || result != tt.wantResult {
				t.Fatalf("Reconcile = %+v, %v; want %+v and no error", result, err, tt.wantResult)
			}
			if logged := f.logs.errors; len(logged) > 0 {
				t.Errorf("errors logged: %q; want none", logged)
			}
			if tt.wantGone {
				if err := f.client.Get(t.Context(), client.ObjectKeyFromObject(f.widget), &Widget{}); !apierrors.IsNotFound(err) {
					t.Errorf("Get = %v; want NotFound", err)
				}
				return
			}
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			if c := conditions.Find(f.live(t), conditions.Reconciling); c == nil || c.Reason != reconcile.ReasonCleaningUp {
				t.Errorf("Reconciling = %+v after the requeue; want %s", c, reconcile.ReasonCleaningUp)
			}
		})
	}
}
