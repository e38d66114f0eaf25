package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/phase"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// standard returns w's standard conditions as "Ready=Status/Reason", with Reconciling and
// Stalled when present, the way kstatus reads them.
func standard(w *Widget) string {
	out := ""
	for _, typ := range []string{conditions.Ready, conditions.Reconciling, conditions.Stalled} {
		if c := conditions.Find(w, typ); c != nil {
			out += fmt.Sprintf(" %s=%s/%s", typ, c.Status, c.Reason)
		}
	}
	return out
}

func TestShellKeepsReadyReconcilingAndStalledFromWhatTheLogicSaid(t *testing.T) {
	errBroken := errors.New("broken")
	mark := func(typ string, status metav1.ConditionStatus, reason string) func(*Widget) {
		return func(w *Widget) {
			conditions.Set(w, metav1.Condition{Type: typ, Status: status, Reason: reason})
		}
	}
	tests := []struct {
		name    string
		marks   []func(*Widget)
		outcome requeue.Outcome
		want    string
	}{{
		name:  "all conditions good is Ready",
		marks: []func(*Widget){mark(conditions.Available, "True", "Serving"), mark(conditions.Degraded, "False", "Serving")},
		want:  " Ready=True/Reconciled",
	}, {
		name:  "no conditions at all is Ready",
		want:  " Ready=True/Reconciled",
		marks: nil,
	}, {
		name:  "Progressing True is Reconciling, even while available",
		marks: []func(*Widget){mark(conditions.Available, "True", "Serving"), mark(conditions.Progressing, "True", "RollingOut")},
		want:  " Ready=False/RollingOut Reconciling=True/RollingOut",
	}, {
		name:  "a positive condition not True is Reconciling",
		marks: []func(*Widget){mark(conditions.Available, "Unknown", "Starting")},
		want:  " Ready=False/Starting Reconciling=True/Starting",
	}, {
		name:  "Degraded True is Stalled",
		marks: []func(*Widget){mark(conditions.Available, "False", "NotOwned"), mark(conditions.Degraded, "True", "NotOwned")},
		want:  " Ready=False/NotOwned Stalled=True/NotOwned",
	}, {
		name:    "an error that is retried is Reconciling",
		outcome: requeue.Retry(errBroken),
		want:    " Ready=False/Retrying Reconciling=True/Retrying",
	}, {
		name:    "a terminal error is Stalled",
		outcome: requeue.Terminal(errBroken),
		want:    " Ready=False/TerminalError Stalled=True/TerminalError",
	}, {
		name:  "the logic's own Stalled wins over its Reconciling",
		marks: []func(*Widget){mark(conditions.Reconciling, "True", "Waiting"), mark(conditions.Stalled, "True", "ScheduleMissed")},
		want:  " Ready=False/ScheduleMissed Stalled=True/ScheduleMissed",
	}, {
		name:  "the logic's own Reconciling is kept",
		marks: []func(*Widget){mark(conditions.Reconciling, "True", "Waiting")},
		want:  " Ready=False/Waiting Reconciling=True/Waiting",
	}, {
		name:  "a Ready the logic sets is the shell's to decide",
		marks: []func(*Widget){mark(conditions.Ready, "False", "Mine")},
		want:  " Ready=True/Reconciled",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				for _, m := range tt.marks {
					m(w)
				}
				return tt.outcome
			})
			_, _ = f.reconcile(t, r)
			if got := standard(f.live(t)); got != tt.want {
				t.Errorf("conditions:%s\nwant:%s", got, tt.want)
			}
		})
	}
}

func TestShellMovesFromReconcilingToReadyAndRemovesWhatNoLongerHolds(t *testing.T) {
	f := newFixture(t)
	progressing := metav1.ConditionTrue
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		conditions.Set(w, metav1.Condition{Type: conditions.Progressing, Status: progressing, Reason: "RollingOut"})
		return requeue.Done()
	})
	steps := []struct {
		progressing metav1.ConditionStatus
		want        string
	}{
		{"True", " Ready=False/RollingOut Reconciling=True/RollingOut"},
		{"False", " Ready=True/Reconciled"},
		{"True", " Ready=False/RollingOut Reconciling=True/RollingOut"},
	}
	for i, step := range steps {
		progressing = step.progressing
		if _, err := f.reconcile(t, r); err != nil {
			t.Fatal(err)
		}
		if got := standard(f.live(t)); got != step.want {
			t.Errorf("step %d: conditions:%s\nwant:%s", i, got, step.want)
		}
	}
}

func TestShellStampsEveryTransitionWithItsOwnClock(t *testing.T) {
	f := newFixture(t)
	// The logic and the Machine set conditions without a clock, as operators do.
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: func(_ context.Context, w *Widget, s reconcile.Scope) (string, requeue.Outcome) {
			conditions.MarkTrue(w, "Scheduled", "Due", "")
			return "", requeue.Done()
		}},
	})
	r := f.reconciler(m.Reconcile)
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	live := f.live(t)
	for _, c := range live.Status.Conditions {
		if !c.LastTransitionTime.Time.Equal(now) {
			t.Errorf("%s changed at %v, want the shell's clock, %v", c.Type, c.LastTransitionTime, now)
		}
	}

	f.clock.Step(time.Hour)
	reconciletest.ExpectNoWrites(t, f.counter, func() {
		if _, err := f.reconcile(t, r); err != nil {
			t.Fatal(err)
		}
	})
}

// readyAgainEvent is the event of an object that became Ready after a Warning, as the
// fake recorder shows it.
const readyAgainEvent = "Normal Ready the object is ready again"

func TestShellRecordsAnEventWhenTheObjectStallsOrFailsAndWhenItRecovers(t *testing.T) {
	type change struct {
		name        string
		degraded    bool // the logic's Degraded condition: Stalled
		progressing bool // the logic's Progressing condition: Reconciling
		failure     error
		want        []string
	}
	f := newFixture(t)
	var step change
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		conditions.Set(w, metav1.Condition{Type: conditions.Degraded, Status: status(step.degraded), Reason: "NotOwned", Message: "deployment x belongs to someone else"})
		conditions.Set(w, metav1.Condition{Type: conditions.Progressing, Status: status(step.progressing), Reason: "RollingOut"})
		if step.failure != nil {
			return requeue.Retry(step.failure)
		}
		return requeue.Done()
	})
	stalled := []string{"Warning NotOwned deployment x belongs to someone else"}
	steps := []change{
		{name: "a new object's first readiness is in its status alone"},
		{name: "nothing changed"},
		{name: "stalled", degraded: true, want: stalled},
		{name: "still stalled", degraded: true},
		{name: "ready after a stall", want: []string{readyAgainEvent}},
		{name: "an ordinary rollout after the recovery", progressing: true},
		{name: "ready after the ordinary rollout: the recovery is not news twice"},
		{name: "a failed reconcile", failure: errors.New("broken"), want: []string{"Warning ReconcileError broken"}},
		{name: "ready after a failure", want: []string{readyAgainEvent}},
		{name: "stalled again", degraded: true, want: stalled},
		{name: "rolling out on the way back", progressing: true},
		{name: "ready after the stall and the rollout", want: []string{readyAgainEvent}},
		{name: "an ordinary rollout", progressing: true},
		{name: "ready after the ordinary rollout"},
	}
	for _, s := range steps {
		step = s
		if _, err := f.reconcile(t, r); err != nil && s.failure == nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s.want, f.recorded()); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", s.name, diff)
		}
	}
}

func status(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// A flapping object (Degraded on, off, on...) asks for two events a flap; the events API's
// recorder folds repeats into a series, so the API server sees a bounded number of writes.
func TestShellEventsOfAFlappingObjectCostABoundedNumberOfWrites(t *testing.T) {
	const flaps = 50
	f := newFixture(t)
	writes := &reconciletest.Counter{}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kubernetes.NewForConfigOrDie(writes.Wrap(cp(t).Config)).EventsV1()})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()

	degraded := false
	r := reconcile.NewShell(f.client, reconcile.LogicFunc[*Widget](func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		status := metav1.ConditionFalse
		if degraded {
			status = metav1.ConditionTrue
		}
		conditions.Set(w, metav1.Condition{Type: conditions.Degraded, Status: status, Reason: "Flapping"})
		return requeue.Done()
	}), reconcile.WithRecorder(broadcaster.NewRecorder(scheme, "widget-controller")))
	for i := range 2 * flaps {
		degraded = i%2 == 1
		if _, err := f.reconcile(t, r); err != nil {
			t.Fatal(err)
		}
	}
	// Recording is asynchronous: wait until the writes stop coming.
	for last := -1; last != writes.Writes(); {
		last = writes.Writes()
		time.Sleep(500 * time.Millisecond)
	}
	n := writes.Writes()
	t.Logf("%d flaps asked for %d events; the API server saw %d event writes", flaps, 2*flaps, n)
	if n == 0 || n > 8 {
		t.Errorf("%d event writes for %d flaps; want a few (one create and one series update per reason)\n%s", n, flaps, writes)
	}
}
