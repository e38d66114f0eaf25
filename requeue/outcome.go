// Package requeue decides when a reconcile runs again.
//
// An Outcome says what happens after a reconcile: done, again after a delay or
// at a time, retry with backoff because of an error, or stop on a terminal
// error. It converts to controller-runtime's (reconcile.Result, error) pair
// without the usual traps: a delay is never returned together with an error,
// which would drop it. Jitter spreads delays. Schedules (an RFC 3339 instant or
// a cron expression) are package schedule's. Nothing here reads the wall
// clock: callers pass now.
package requeue

import (
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// immediately is the smallest delay controller-runtime honours: "again now"
// without the rate limiter's backoff.
const immediately = time.Nanosecond

// kind orders outcomes by increasing urgency, so that Merge keeps the largest.
type kind uint8

const (
	done kind = iota
	scheduled
	terminal
	retry
)

// Outcome says what happens after a reconcile. The zero value is Done.
type Outcome struct {
	kind kind
	// A scheduled outcome runs again after `after` (when positive) or at `at`
	// (when set), whichever comes first.
	after time.Duration
	at    time.Time
	err   error
	// priority is controller-runtime's queue priority for the next run; nil keeps the
	// request's own.
	priority *int
}

// Done means nothing more to do until something changes.
func Done() Outcome { return Outcome{} }

// After means run again after d; d <= 0 means again now.
func After(d time.Duration) Outcome {
	return Outcome{kind: scheduled, after: max(d, immediately)}
}

// At means run again at t, measured against the now given to Delay or Result;
// a time already past means again now.
func At(t time.Time) Outcome {
	if t.IsZero() {
		return After(0)
	}
	return Outcome{kind: scheduled, at: t}
}

// Retry means retry with the controller's rate-limited backoff because of err,
// which controller-runtime logs. A nil err means Done.
//
// Use it for failures, not for waiting: backoff grows to minutes. To wait for
// something that is not ready yet, use After.
func Retry(err error) Outcome {
	if err == nil {
		return Done()
	}
	return Outcome{kind: retry, err: err}
}

// RetryAfter means run again after d because of err. The error is kept for the
// caller to report (see Err) but not returned to controller-runtime, which
// would drop the delay. A nil err means After(d).
func RetryAfter(err error, d time.Duration) Outcome {
	o := After(d)
	o.err = err
	return o
}

// Terminal means stop: err is reported but never retried, until the object
// changes. A nil err means Done.
func Terminal(err error) Outcome {
	if err == nil {
		return Done()
	}
	return Outcome{kind: terminal, err: err}
}

// FromError turns an error into an Outcome: nil is Done, an error that is
// already a reconcile.TerminalError is Terminal, anything else is Retry.
func FromError(err error) Outcome {
	if errors.Is(err, reconcile.TerminalError(nil)) {
		return Terminal(err)
	}
	return Retry(err)
}

// Merge combines the outcomes of several steps of one reconcile into the most
// urgent: Retry, then Terminal, then the earliest scheduled run, then Done.
// Outcomes of equal urgency combine: their errors are joined and the earliest
// run wins. Retry beats Terminal because the retry runs the whole reconcile
// again, which meets the terminal error again.
func Merge(outcomes ...Outcome) Outcome {
	var m Outcome
	for _, o := range outcomes {
		switch {
		case o.kind > m.kind:
			m = o
		case o.kind == m.kind:
			m.err = join(m.err, o.err)
			if o.after > 0 && (m.after == 0 || o.after < m.after) {
				m.after = o.after
			}
			if !o.at.IsZero() && (m.at.IsZero() || o.at.Before(m.at)) {
				m.at = o.at
			}
		}
	}
	// The highest priority any step asked for stays, whichever outcome won: a step that
	// asked to be handled first still wants it when another step decides when.
	for _, o := range outcomes {
		if o.priority != nil && (m.priority == nil || *o.priority > *m.priority) {
			m.priority = o.priority
		}
	}
	return m
}

// join is errors.Join that keeps a lone error as it is.
func join(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return errors.Join(a, b)
}

// Err returns the error the outcome carries, if any.
func (o Outcome) Err() error { return o.err }

// IsDone reports whether nothing more is to be done.
func (o Outcome) IsDone() bool { return o.kind == done }

// IsTerminal reports whether the outcome is a terminal error: retrying cannot help until
// the object changes.
func (o Outcome) IsTerminal() bool { return o.kind == terminal }

// Delay returns how long after now the reconcile should run again, and whether
// it is scheduled at all. A time already past gives the smallest positive delay.
func (o Outcome) Delay(now time.Time) (time.Duration, bool) {
	if o.kind != scheduled {
		return 0, false
	}
	d := o.after
	if !o.at.IsZero() {
		untilAt := max(o.at.Sub(now), immediately)
		if d == 0 || untilAt < d {
			d = untilAt
		}
	}
	return d, true
}

// Result converts the outcome to what a controller-runtime Reconciler returns.
// It never returns a delay together with an error, since controller-runtime
// would ignore the delay: RetryAfter gives the delay and no error. Terminal
// gives a reconcile.TerminalError.
//
// A priority asked for with WithPriority is in the result, whatever the kind.
func (o Outcome) Result(now time.Time) (reconcile.Result, error) {
	result := reconcile.Result{Priority: o.priority}
	switch o.kind {
	case scheduled:
		result.RequeueAfter, _ = o.Delay(now)
		return result, nil
	case retry:
		return result, o.err
	case terminal:
		if errors.Is(o.err, reconcile.TerminalError(nil)) {
			return result, o.err
		}
		return result, reconcile.TerminalError(o.err)
	}
	return result, nil
}

// WithPriority asks controller-runtime to queue the next run of the object at priority
// p (higher first), for a controller that uses a priority queue; other queues ignore it.
// Without it the request keeps the priority it was queued with. Merge keeps the highest
// priority asked for.
func (o Outcome) WithPriority(p int) Outcome {
	o.priority = &p
	return o
}

// Priority returns the priority asked for with WithPriority, and whether one was.
func (o Outcome) Priority() (int, bool) {
	if o.priority == nil {
		return 0, false
	}
	return *o.priority, true
}

// String describes the outcome for logs: "done", "after 5s", "at 2024-05-01T10:00:00Z",
// "retry after 5s: <err>", "retry: <err>", "terminal: <err>".
func (o Outcome) String() string {
	switch o.kind {
	case scheduled:
		s := o.when()
		if o.err != nil {
			s = "retry " + s + ": " + o.err.Error()
		}
		return s
	case retry:
		return "retry: " + o.err.Error()
	case terminal:
		return "terminal: " + o.err.Error()
	}
	return "done"
}

// when describes a scheduled outcome: "now", "after 5s", "at <time>", or both.
func (o Outcome) when() string {
	var after, at string
	switch o.after {
	case 0:
	case immediately:
		after = "now"
	default:
		after = "after " + o.after.String()
	}
	if !o.at.IsZero() {
		at = "at " + o.at.UTC().Format(time.RFC3339Nano)
	}
	switch {
	case after == "":
		return at
	case at == "":
		return after
	}
	return after + " or " + at
}

// WithJitter spreads the outcome's delay by up to fraction of it (see Jitter),
// so that many objects scheduled alike do not all run at once. A time given to
// At is kept exact: it was asked for.
func (o Outcome) WithJitter(fraction float64, random func() float64) Outcome {
	if o.after > immediately {
		o.after = Jitter(o.after, fraction, random)
	}
	return o
}
