package phase_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/phase"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// handler is what a State runs.
type handler = func(context.Context, *Widget, reconcile.Scope) (string, requeue.Outcome)

// newMachine returns a Machine of phases that starts in PENDING.
func newMachine(t testing.TB, phases map[string]phase.State[*Widget]) *phase.Machine[*Widget] {
	t.Helper()
	m, err := phase.New("PENDING", phases)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// moveTo returns a handler that moves to next ("" to stay) with outcome.
func moveTo(next string, outcome requeue.Outcome) handler {
	return func(context.Context, *Widget, reconcile.Scope) (string, requeue.Outcome) { return next, outcome }
}

// trace records the phases whose handlers ran.
type trace []string

// moveTo is moveTo that records the phase it runs in.
func (tr *trace) moveTo(next string, outcome requeue.Outcome) handler {
	return func(_ context.Context, w *Widget, s reconcile.Scope) (string, requeue.Outcome) {
		*tr = append(*tr, w.Status.Phase)
		return next, outcome
	}
}

// progress returns what the Machine told the shell of w: "Reconciling Reason",
// "Stalled Reason" or "Ready" when it set neither.
func progress(w *Widget) string {
	for _, typ := range []string{conditions.Stalled, conditions.Reconciling} {
		if c := conditions.Find(w, typ); c != nil && c.Status == "True" {
			return typ + " " + c.Reason
		}
	}
	return "Ready"
}

// reconcileAt runs m on a Widget in phase and returns the Widget and the outcome.
func reconcileAt(m *phase.Machine[*Widget], in string) (*Widget, requeue.Outcome) {
	w := &Widget{Status: WidgetStatus{Phase: in}}
	return w, m.Reconcile(context.Background(), w, reconcile.Scope{})
}

func TestMachineStartsAnObjectWithoutAPhaseInTheInitialPhase(t *testing.T) {
	var ran trace
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: ran.moveTo("", requeue.Done())},
	})
	w, _ := reconcileAt(m, "")
	if w.Status.Phase != "PENDING" || !cmp.Equal(ran, trace{"PENDING"}) {
		t.Errorf("phase %q after running %q; want PENDING after running its handler", w.Status.Phase, ran)
	}
}

func TestMachineRunsTheNextPhaseInTheSameReconcile(t *testing.T) {
	var ran trace
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: ran.moveTo("RUNNING", requeue.After(time.Hour)), Next: []string{"RUNNING"}},
		"RUNNING": {Handle: ran.moveTo("", requeue.After(time.Minute)), Next: []string{"DONE"}},
		"DONE":    {},
	})
	w, outcome := reconcileAt(m, "PENDING")
	if w.Status.Phase != "RUNNING" || !cmp.Equal(ran, trace{"PENDING", "RUNNING"}) {
		t.Errorf("phase %q after running %q; want RUNNING after running PENDING and RUNNING", w.Status.Phase, ran)
	}
	if got := outcome.String(); got != "after 1m0s" {
		t.Errorf("outcome = %s; want the most urgent of the steps', after 1m0s", got)
	}
}

func TestMachineReportsThePhaseAsReconcilingReadyOrStalled(t *testing.T) {
	stay := moveTo("", requeue.Done())
	failWith := func(reason string) handler {
		return func(_ context.Context, w *Widget, s reconcile.Scope) (string, requeue.Outcome) {
			conditions.MarkFalse(w, "Succeeded", reason, "the command failed")
			return "DONE", requeue.Done()
		}
	}
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING":          {Handle: stay},
		"IN_PROGRESS":      {Handle: stay},
		"waiting-for-pods": {Handle: stay},
		"RUNNING":          {Handle: moveTo("DONE", requeue.Done()), Next: []string{"DONE"}},
		"FAILING":          {Handle: failWith("CommandFailed"), Next: []string{"DONE"}},
		"DONE":             {},
	})
	tests := []struct {
		phase, want string
	}{
		{"PENDING", "Reconciling Pending"},
		{"IN_PROGRESS", "Reconciling InProgress"},
		{"waiting-for-pods", "Reconciling WaitingForPods"},
		{"RUNNING", "Ready"},
		{"FAILING", "Stalled CommandFailed"},
		{"DONE", "Ready"},
	}
	for _, tt := range tests {
		if w, _ := reconcileAt(m, tt.phase); progress(w) != tt.want {
			t.Errorf("in %s: %s, want %s", tt.phase, progress(w), tt.want)
		}
	}
}

func TestMachineRefusesAnUndeclaredTransition(t *testing.T) {
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: moveTo("DONE", requeue.After(time.Minute)), Next: []string{"RUNNING"}},
		"RUNNING": {Handle: moveTo("", requeue.Done())},
		"DONE":    {},
	})
	w, outcome := reconcileAt(m, "PENDING")
	if w.Status.Phase != "PENDING" {
		t.Errorf("phase = %s; want PENDING, unchanged", w.Status.Phase)
	}
	c := conditions.Find(w, conditions.Stalled)
	if c == nil || c.Reason != phase.ReasonInvalidTransition || !strings.Contains(c.Message, "PENDING cannot move to DONE") {
		t.Errorf("Stalled = %+v; want reason %s naming the transition", c, phase.ReasonInvalidTransition)
	}
	if _, err := outcome.Result(now); !errors.Is(err, crreconcile.TerminalError(nil)) {
		t.Errorf("outcome = %s; want terminal, since only a new operator fixes it", outcome)
	}
}

func TestMachineReportsAnUnknownPhaseWithoutRetrying(t *testing.T) {
	var ran trace
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: ran.moveTo("", requeue.Retry(errors.New("must not run")))},
		"DONE":    {},
	})
	w, outcome := reconcileAt(m, "EXPLODED")
	if !outcome.IsDone() || len(ran) > 0 {
		t.Errorf("outcome = %s after running %q; want done after running nothing", outcome, ran)
	}
	c := conditions.Find(w, conditions.Stalled)
	if c == nil || c.Reason != phase.ReasonUnknown || !strings.Contains(c.Message, `"EXPLODED" is not one of DONE, PENDING`) {
		t.Errorf("Stalled = %+v; want reason %s naming the phase and the known ones", c, phase.ReasonUnknown)
	}
	if w.Status.Phase != "EXPLODED" {
		t.Errorf("phase = %s; want EXPLODED, left for a person to see", w.Status.Phase)
	}
}

func TestMachineRunsNothingInATerminalPhase(t *testing.T) {
	var ran trace
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: ran.moveTo("DONE", requeue.Done()), Next: []string{"DONE"}},
		"DONE":    {},
	})
	w, outcome := reconcileAt(m, "DONE")
	if !outcome.IsDone() || len(ran) > 0 || w.Status.Phase != "DONE" {
		t.Errorf("phase %s, outcome %s after running %q; want DONE, done, nothing run", w.Status.Phase, outcome, ran)
	}
}

func TestMachineStopsAfterAnErrorWithoutRunningTheNextPhase(t *testing.T) {
	var ran trace
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING": {Handle: ran.moveTo("RUNNING", requeue.Retry(errors.New("broken"))), Next: []string{"RUNNING"}},
		"RUNNING": {Handle: ran.moveTo("", requeue.Done())},
	})
	w, outcome := reconcileAt(m, "PENDING")
	if w.Status.Phase != "RUNNING" || !cmp.Equal(ran, trace{"PENDING"}) {
		t.Errorf("phase %s after running %q; want RUNNING after running PENDING alone", w.Status.Phase, ran)
	}
	if outcome.Err() == nil || progress(w) != "Reconciling Running" {
		t.Errorf("outcome %s, %s; want the error and Reconciling Running", outcome, progress(w))
	}
}

func TestMachineStopsACycleAfterOneStepPerPhase(t *testing.T) {
	var ran trace
	m := newMachine(t, map[string]phase.State[*Widget]{
		"PENDING":  {Handle: ran.moveTo("RUNNING", requeue.Done()), Next: []string{"RUNNING"}},
		"RUNNING":  {Handle: ran.moveTo("RETRYING", requeue.Done()), Next: []string{"RETRYING"}},
		"RETRYING": {Handle: ran.moveTo("RUNNING", requeue.Done()), Next: []string{"RUNNING"}},
	})
	w, _ := reconcileAt(m, "PENDING")
	if !cmp.Equal(ran, trace{"PENDING", "RUNNING", "RETRYING"}) {
		t.Errorf("ran %q; want one step per phase", ran)
	}
	// The condition tells where the cycle stopped, for the next reconcile goes on from there.
	if w.Status.Phase != "RUNNING" || progress(w) != "Reconciling Running" {
		t.Errorf("phase %s, %s; want RUNNING, Reconciling Running", w.Status.Phase, progress(w))
	}
}

func TestNewRefusesAnUndeclaredPhase(t *testing.T) {
	handle := moveTo("", requeue.Done())
	tests := []struct {
		name    string
		initial string
		phases  map[string]phase.State[*Widget]
		want    string
	}{{
		name:    "an undeclared initial phase",
		initial: "NEW",
		phases:  map[string]phase.State[*Widget]{"PENDING": {Handle: handle}},
		want:    `initial phase "NEW" is not declared`,
	}, {
		name:    "no phases at all",
		initial: "PENDING",
		want:    `initial phase "PENDING" is not declared`,
	}, {
		name:    "a transition to an undeclared phase",
		initial: "PENDING",
		phases:  map[string]phase.State[*Widget]{"PENDING": {Handle: handle, Next: []string{"RUNNING"}}},
		want:    `phase "PENDING" may move to "RUNNING", which is not declared`,
	}, {
		name:    "a terminal phase with transitions",
		initial: "PENDING",
		phases:  map[string]phase.State[*Widget]{"PENDING": {Next: []string{"PENDING"}}},
		want:    `terminal phase "PENDING" (no handler) cannot move to other phases`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := phase.New(tt.initial, tt.phases)
			if m != nil || err == nil || err.Error() != tt.want {
				t.Errorf("New = %v, %v; want the error %s", m, err, tt.want)
			}
		})
	}
}

// BenchmarkMachineStep measures one reconcile of a machine: staying in a phase (the steady
// state), moving to the next phase, and moving to a terminal one.
func BenchmarkMachineStep(b *testing.B) {
	finishWhenSized := func(_ context.Context, w *Widget, s reconcile.Scope) (string, requeue.Outcome) {
		if w.Spec.Size == 0 {
			return "", requeue.After(time.Minute)
		}
		return "DONE", requeue.Done()
	}
	m := newMachine(b, map[string]phase.State[*Widget]{
		"PENDING": {Handle: moveTo("RUNNING", requeue.Done()), Next: []string{"RUNNING"}},
		"RUNNING": {Handle: finishWhenSized, Next: []string{"DONE"}},
		"DONE":    {},
	})
	benchmarks := []struct {
		name          string
		phase, reason string
		size          int32
	}{
		{"stay", "RUNNING", "Running", 0},
		{"transition", "PENDING", "Pending", 0},
		{"terminal", "RUNNING", "Running", 1},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			ctx := context.Background()
			// The Widget starts each step in bm.phase, with the condition that phase has.
			w := &Widget{Spec: WidgetSpec{Size: bm.size}, Status: WidgetStatus{Phase: bm.phase}}
			conditions.MarkTrue(w, conditions.Reconciling, bm.reason, "phase %s", bm.phase)
			start := w.Status.Conditions[0]
			b.ReportAllocs()
			for b.Loop() {
				w.Status.Phase, w.Status.Conditions[0] = bm.phase, start
				m.Reconcile(ctx, w, reconcile.Scope{})
			}
		})
	}
}
