package requeue_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/requeue"
)

var (
	now     = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	errBoom = errors.New("boom")
	errBad  = errors.New("bad spec")
)

func TestResult(t *testing.T) {
	tests := []struct {
		name     string
		outcome  requeue.Outcome
		after    time.Duration
		err      error // compared with errors.Is
		terminal bool
	}{
		{name: "zero value is done", outcome: requeue.Outcome{}},
		{name: "Done asks for nothing", outcome: requeue.Done()},
		{name: "After requeues after the delay", outcome: requeue.After(5 * time.Second), after: 5 * time.Second},
		{name: "After zero requeues now without backoff", outcome: requeue.After(0), after: time.Nanosecond},
		{name: "After a negative delay requeues now", outcome: requeue.After(-time.Hour), after: time.Nanosecond},
		{name: "At a future time requeues after the time left", outcome: requeue.At(now.Add(time.Minute)), after: time.Minute},
		{name: "At a past time requeues now", outcome: requeue.At(now.Add(-time.Minute)), after: time.Nanosecond},
		{name: "At the zero time requeues now", outcome: requeue.At(time.Time{}), after: time.Nanosecond},
		{name: "Retry returns the error for backoff", outcome: requeue.Retry(errBoom), err: errBoom},
		{name: "Retry of nil is done", outcome: requeue.Retry(nil)},
		{name: "RetryAfter keeps the delay and returns no error", outcome: requeue.RetryAfter(errBoom, time.Minute), after: time.Minute},
		{name: "RetryAfter of nil is After", outcome: requeue.RetryAfter(nil, time.Minute), after: time.Minute},
		{name: "Terminal returns a terminal error", outcome: requeue.Terminal(errBad), err: errBad, terminal: true},
		{name: "Terminal of nil is done", outcome: requeue.Terminal(nil)},
		{name: "Terminal does not wrap a terminal error twice", outcome: requeue.Terminal(reconcile.TerminalError(errBad)), err: errBad, terminal: true},
		{name: "FromError of nil is done", outcome: requeue.FromError(nil)},
		{name: "FromError of an error retries", outcome: requeue.FromError(errBoom), err: errBoom},
		{name: "FromError keeps a wrapped terminal error terminal", outcome: requeue.FromError(fmt.Errorf("step: %w", reconcile.TerminalError(errBad))), err: errBad, terminal: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.outcome.Result(now)
			if res.RequeueAfter != tt.after {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, tt.after)
			}
			if res.RequeueAfter != 0 && err != nil {
				t.Errorf("returned a delay with error %v: controller-runtime would drop the delay", err)
			}
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("error = %v, want %v", err, tt.err)
			}
			if got := errors.Is(err, reconcile.TerminalError(nil)); got != tt.terminal {
				t.Errorf("terminal = %v, want %v", got, tt.terminal)
			}
			if got := tt.outcome.IsDone(); got != (tt.after == 0 && tt.err == nil) {
				t.Errorf("IsDone() = %v", got)
			}
			if got := tt.outcome.IsTerminal(); got != tt.terminal {
				t.Errorf("IsTerminal() = %v, want %v", got, tt.terminal)
			}
		})
	}
}

func TestTerminalMarksAnErrorOnce(t *testing.T) {
	for _, err := range []error{errBad, reconcile.TerminalError(errBad)} {
		if _, got := requeue.Terminal(err).Result(now); got.Error() != "terminal error: bad spec" {
			t.Errorf("Terminal(%v) returned %q, want it marked terminal once", err, got)
		}
	}
}

func TestErrReturnsTheCarriedError(t *testing.T) {
	tests := []struct {
		name    string
		outcome requeue.Outcome
		want    error
	}{
		{"Done carries none", requeue.Done(), nil},
		{"After carries none", requeue.After(time.Second), nil},
		{"Retry carries its error", requeue.Retry(errBoom), errBoom},
		{"RetryAfter carries its error though Result does not return it", requeue.RetryAfter(errBoom, time.Second), errBoom},
		{"Terminal carries its error", requeue.Terminal(errBad), errBad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.outcome.Err(); got != tt.want {
				t.Errorf("Err() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDelay(t *testing.T) {
	tests := []struct {
		name      string
		outcome   requeue.Outcome
		want      time.Duration
		scheduled bool
	}{
		{"Done is not scheduled", requeue.Done(), 0, false},
		{"Retry is not scheduled, backoff decides", requeue.Retry(errBoom), 0, false},
		{"Terminal is not scheduled", requeue.Terminal(errBad), 0, false},
		{"After is scheduled after its delay", requeue.After(time.Hour), time.Hour, true},
		{"At is scheduled after the time left", requeue.At(now.Add(90 * time.Second)), 90 * time.Second, true},
		{"After merged with a sooner At takes the At", requeue.Merge(requeue.After(time.Hour), requeue.At(now.Add(time.Minute))), time.Minute, true},
		{"After merged with a later At takes the After", requeue.Merge(requeue.After(time.Second), requeue.At(now.Add(time.Minute))), time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := tt.outcome.Delay(now)
			if d != tt.want || ok != tt.scheduled {
				t.Errorf("Delay() = %v, %v, want %v, %v", d, ok, tt.want, tt.scheduled)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	errOther := errors.New("other")
	tests := []struct {
		name     string
		outcomes []requeue.Outcome
		want     string
	}{
		{"of nothing is done", nil, "done"},
		{"of dones is done", []requeue.Outcome{requeue.Done(), requeue.Done()}, "done"},
		{"keeps a delay over done", []requeue.Outcome{requeue.Done(), requeue.After(time.Minute)}, "after 1m0s"},
		{"keeps the shortest delay", []requeue.Outcome{requeue.After(time.Minute), requeue.After(time.Second), requeue.After(time.Hour)}, "after 1s"},
		{"keeps again-now over any delay", []requeue.Outcome{requeue.After(time.Minute), requeue.After(0)}, "now"},
		{"keeps the earliest time", []requeue.Outcome{requeue.At(now.Add(time.Hour)), requeue.At(now.Add(time.Minute))}, "at 2024-05-01T10:01:00Z"},
		{"keeps both a delay and a time until now is known", []requeue.Outcome{requeue.After(time.Minute), requeue.At(now)}, "after 1m0s or at 2024-05-01T10:00:00Z"},
		{"keeps the error of a RetryAfter with a shorter plain delay", []requeue.Outcome{requeue.RetryAfter(errBoom, time.Hour), requeue.After(time.Second)}, "retry after 1s: boom"},
		{"prefers a terminal error over a delay", []requeue.Outcome{requeue.After(time.Second), requeue.Terminal(errBad)}, "terminal: bad spec"},
		{"prefers a retry over a delay", []requeue.Outcome{requeue.RetryAfter(errOther, time.Second), requeue.Retry(errBoom)}, "retry: boom"},
		{"prefers a retry over a terminal error", []requeue.Outcome{requeue.Terminal(errBad), requeue.Retry(errBoom)}, "retry: boom"},
		{"joins the errors of retries", []requeue.Outcome{requeue.Retry(errBoom), requeue.Done(), requeue.Retry(errOther)}, "retry: boom\nother"},
		{"joins the errors of terminal outcomes", []requeue.Outcome{requeue.Terminal(errBad), requeue.Terminal(errOther)}, "terminal: bad spec\nother"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := requeue.Merge(tt.outcomes...).String(); got != tt.want {
				t.Errorf("Merge() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMergedErrorsStayRecognisable(t *testing.T) {
	_, err := requeue.Merge(requeue.Terminal(errBad), requeue.Terminal(errBoom)).Result(now)
	if !errors.Is(err, errBad) || !errors.Is(err, errBoom) || !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Errorf("error %v lost a cause or its terminal mark", err)
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		outcome requeue.Outcome
		want    string
	}{
		{requeue.Done(), "done"},
		{requeue.After(5 * time.Second), "after 5s"},
		{requeue.After(0), "now"},
		{requeue.At(time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))), "at 2024-05-01T10:00:00Z"},
		{requeue.RetryAfter(errBoom, time.Minute), "retry after 1m0s: boom"},
		{requeue.Retry(errBoom), "retry: boom"},
		{requeue.Terminal(errBad), "terminal: bad spec"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.outcome.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWithJitter(t *testing.T) {
	half := func() float64 { return 0.5 }
	tests := []struct {
		name    string
		outcome requeue.Outcome
		want    string
	}{
		{"spreads a delay", requeue.After(time.Minute), "after 1m3s"},
		{"spreads the delay of a RetryAfter", requeue.RetryAfter(errBoom, time.Minute), "retry after 1m3s: boom"},
		{"keeps again-now", requeue.After(0), "now"},
		{"keeps a time exact", requeue.At(now), "at 2024-05-01T10:00:00Z"},
		{"leaves a retry to the backoff", requeue.Retry(errBoom), "retry: boom"},
		{"leaves done alone", requeue.Done(), "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.outcome.WithJitter(0.1, half).String(); got != tt.want {
				t.Errorf("WithJitter() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJitter(t *testing.T) {
	constant := func(r float64) func() float64 { return func() float64 { return r } }
	tests := []struct {
		name     string
		d        time.Duration
		fraction float64
		random   func() float64
		want     time.Duration
	}{
		{"adds the fraction scaled by the random number", time.Minute, 0.5, constant(0.5), 75 * time.Second},
		{"adds nothing for a random zero", time.Minute, 0.5, constant(0), time.Minute},
		{"clamps a random number above one", time.Minute, 0.5, constant(7), 90 * time.Second},
		{"ignores a negative random number", time.Minute, 0.5, constant(-1), time.Minute},
		{"ignores a NaN random number", time.Minute, 0.5, constant(math.NaN()), time.Minute},
		{"ignores a nil source", time.Minute, 0.5, nil, time.Minute},
		{"ignores a zero fraction", time.Minute, 0, constant(0.5), time.Minute},
		{"ignores a NaN fraction", time.Minute, math.NaN(), constant(0.5), time.Minute},
		{"keeps a zero delay", 0, 0.5, constant(0.5), 0},
		{"keeps a negative delay", -time.Second, 0.5, constant(0.5), -time.Second},
		{"saturates instead of overflowing", math.MaxInt64 / 2, 10, constant(0.9), math.MaxInt64},
		{"saturates for an infinite fraction", time.Second, math.Inf(1), constant(0.5), math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := requeue.Jitter(tt.d, tt.fraction, tt.random); got != tt.want {
				t.Errorf("Jitter() = %v, want %v", got, tt.want)
			}
		})
	}
}
