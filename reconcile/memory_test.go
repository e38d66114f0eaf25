package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// laggingCache is the fixture's client with a cache that has not yet seen the latest
// writes: while frozen, every read answers the Widget as it was when the cache froze, as
// an informer whose watch lags does. Other reads and all writes go to the API server.
type laggingCache struct {
	client.Client
	mu        sync.Mutex
	frozen    *Widget
	conflicts atomic.Int32 // status writes refused with 409 Conflict
}

func (c *laggingCache) Status() client.SubResourceWriter {
	return conflictCounting{c.Client.Status(), &c.conflicts}
}

type conflictCounting struct {
	client.SubResourceWriter
	n *atomic.Int32
}

func (w conflictCounting) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	err := w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	if apierrors.IsConflict(err) {
		w.n.Add(1)
	}
	return err
}

func (c *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	frozen := c.frozen
	c.mu.Unlock()
	w, ok := obj.(*Widget)
	if frozen == nil || !ok || key != client.ObjectKeyFromObject(frozen) {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	frozen.DeepCopyInto(w)
	return nil
}

// freeze makes reads answer w from now on; catchUp ends it, as the watch delivering the
// latest event does.
func (c *laggingCache) freeze(w *Widget) { c.mu.Lock(); c.frozen = w.DeepCopy(); c.mu.Unlock() }
func (c *laggingCache) catchUp()         { c.mu.Lock(); c.frozen = nil; c.mu.Unlock() }

// DeepCopy returns a copy of w.
func (w *Widget) DeepCopy() *Widget {
	out := new(Widget)
	w.DeepCopyInto(out)
	return out
}

// stepper is logic that decides from the status it is given: it moves the phase one step
// on, "" to "one" to "two", and counts its decisions by the phase it started from.
type stepper struct {
	mu      sync.Mutex
	decided map[string]int
}

func (s *stepper) Reconcile(_ context.Context, w *Widget, _ reconcile.Scope) requeue.Outcome {
	s.mu.Lock()
	s.decided[w.Status.Phase]++
	s.mu.Unlock()
	switch w.Status.Phase {
	case "":
		w.Status.Phase = "one"
	case "one":
		w.Status.Phase = "two"
	}
	return requeue.Done()
}

func TestReadYourOwnWritesKeepsTheLogicFromDecidingOnAStaleCache(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		// stale is how many times the logic decides again from the phase it already moved
		// on from; conflicts, the 409s the shell's writes meet.
		stale, conflicts int
	}{
		{"with read-your-own-writes", reconcile.DefaultExpectationTimeout, 0, 0},
		{"without", 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			cache := &laggingCache{Client: f.client}
			logic := &stepper{decided: map[string]int{}}
			r := reconcile.NewShell[*Widget](cache, logic, reconcile.WithClock(f.clock), reconcile.WithExpectationTimeout(tc.timeout))
			req := reconcileRequest(f)

			// The first reconcile moves "" to "one"; the cache does not show that write yet.
			cache.freeze(f.live(t))
			if _, err := r.Reconcile(f.context(t), req); err != nil {
				t.Fatal(err)
			}
			// A child's event brings the Widget back before the watch delivered the write.
			result, err := r.Reconcile(f.context(t), req)
			if err != nil {
				t.Fatal(err)
			}
			conflicts := int(cache.conflicts.Load())
			// The watch delivers the write; its event brings the Widget back once more.
			cache.catchUp()
			if _, err := r.Reconcile(f.context(t), req); err != nil {
				t.Fatal(err)
			}

			stale := logic.decided[""] - 1
			t.Logf("%s: the logic ran %d times, %d of them on a status it had already replaced; %d write(s) refused with 409 Conflict; the stale reconcile was put off for %v",
				tc.name, logic.decided[""]+logic.decided["one"]+logic.decided["two"], stale, conflicts, result.RequeueAfter)
			if stale != tc.stale || conflicts != tc.conflicts {
				t.Errorf("%d stale decisions and %d conflicts, want %d and %d", stale, conflicts, tc.stale, tc.conflicts)
			}
			if tc.timeout > 0 && (result.RequeueAfter <= 0 || result.RequeueAfter > tc.timeout) {
				t.Errorf("the reconcile on a stale cache asked to run again after %v, want within the timeout, %v", result.RequeueAfter, tc.timeout)
			}
			if live := f.live(t); live.Status.Phase != "two" {
				t.Errorf("phase = %q, want two: the last reconcile decided from the caught-up cache", live.Status.Phase)
			}
		})
	}
}

func TestReadYourOwnWritesGivesUpOnALostEventAfterTheTimeout(t *testing.T) {
	f := newFixture(t)
	cache := &laggingCache{Client: f.client}
	logic := &stepper{decided: map[string]int{}}
	r := reconcile.NewShell[*Widget](cache, logic, reconcile.WithClock(f.clock))
	req := reconcileRequest(f)
	cache.freeze(f.live(t))
	if _, err := r.Reconcile(f.context(t), req); err != nil {
		t.Fatal(err)
	}

	// The watch never delivers the write: once the timeout has passed, the logic runs.
	f.clock.Step(reconcile.DefaultExpectationTimeout + time.Second)
	if _, err := r.Reconcile(f.context(t), req); err != nil {
		t.Fatal(err)
	}
	if logic.decided[""] != 2 {
		t.Errorf("the logic ran %d times on the stale copy, want once more after the timeout", logic.decided[""]-1)
	}
}

func TestProgressIsWrittenAtMostOncePerIntervalAndAVerdictAtOnce(t *testing.T) {
	f := newFixture(t)
	available, done, phase := 0, false, "Starting"
	r := f.reconciler(func(_ context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		w.Status.Phase = phase
		if done {
			conditions.MarkFalse(w, conditions.Progressing, "RolloutComplete", "%d of 3 available", available)
		} else {
			conditions.MarkTrue(w, conditions.Progressing, "RollingOut", "%d of 3 available", available)
		}
		return requeue.Done()
	}, reconcile.WithProgressInterval(30*time.Second))

	steps := []struct {
		name      string
		change    func()
		writes    int
		requeueIn time.Duration // 0: none asked for
		message   string        // of Progressing, as the API server holds it
	}{
		{"the first report", func() {}, 1, 0, "0 of 3 available"},
		{"progress soon after", func() { available = 1 }, 0, 30 * time.Second, "0 of 3 available"},
		{"more progress", func() { f.clock.Step(10 * time.Second); available = 2 }, 0, 20 * time.Second, "0 of 3 available"},
		{"the interval passed", func() { f.clock.Step(20 * time.Second) }, 1, 0, "2 of 3 available"},
		{"progress soon after again", func() { available = 3 }, 0, 30 * time.Second, "2 of 3 available"},
		{"a new phase", func() { phase = "Warming" }, 1, 0, "3 of 3 available"},
		{"the rollout completes", func() { done = true }, 1, 0, "3 of 3 available"},
	}
	for _, s := range steps {
		s.change()
		f.counter.Reset()
		result, err := f.reconcile(t, r)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		progressing := conditions.Find(f.live(t), conditions.Progressing)
		got := fmt.Sprintf("%d write(s), requeue in %v, message %q", f.counter.Writes(), result.RequeueAfter, progressing.Message)
		want := fmt.Sprintf("%d write(s), requeue in %v, message %q", s.writes, s.requeueIn, s.message)
		if got != want {
			t.Errorf("%s: %s; want %s", s.name, got, want)
		}
	}
	if live := f.live(t); !conditions.IsTrue(live, conditions.Ready) {
		t.Errorf("Ready = %+v, want True once the rollout completed", conditions.Find(live, conditions.Ready))
	}
}

func reconcileRequest(f *fixture) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.widget)}
}

func TestIgnoreOwnWritesDropsTheWatchEventOfTheShellsOwnWriteOnly(t *testing.T) {
	// A shell whose logic moves a Widget from "" to "one" has written it (from before to
	// written); each case then makes an update event for its predicate to judge.
	type shell struct {
		f               *fixture
		r               reconcile.Shell[*Widget]
		cache           *laggingCache
		before, written *Widget
		// reconcileHeld starts a reconcile of the Widget and returns once its logic runs,
		// held until release is called.
		reconcileHeld func() (release func())
	}
	for _, tc := range []struct {
		name  string
		event func(t *testing.T, s shell) event.UpdateEvent
		pass  bool
	}{
		{"the event of the shell's own write", func(_ *testing.T, s shell) event.UpdateEvent {
			return event.UpdateEvent{ObjectOld: s.before, ObjectNew: s.written}
		}, false},
		{"a later change by someone else", func(t *testing.T, s shell) event.UpdateEvent {
			changed := s.written.DeepCopy()
			changed.Spec.Size++
			if err := s.f.client.Update(t.Context(), changed); err != nil {
				t.Fatal(err)
			}
			return event.UpdateEvent{ObjectOld: s.written, ObjectNew: changed}
		}, true},
		{"the informer's resync", func(_ *testing.T, s shell) event.UpdateEvent {
			return event.UpdateEvent{ObjectOld: s.written, ObjectNew: s.written}
		}, true},
		{"the event of the write while a reconcile of the object runs", func(t *testing.T, s shell) event.UpdateEvent {
			// That reconcile may have read the Widget from before the write: the event
			// must bring it back.
			t.Cleanup(s.reconcileHeld())
			return event.UpdateEvent{ObjectOld: s.before, ObjectNew: s.written}
		}, true},
		{"the event of the write a reconcile was put off to wait for", func(t *testing.T, s shell) event.UpdateEvent {
			s.cache.freeze(s.before)
			if result, err := s.r.Reconcile(s.f.context(t), reconcileRequest(s.f)); err != nil || result.RequeueAfter == 0 {
				t.Fatalf("a reconcile on the stale cache returned %+v, %v; want it put off", result, err)
			}
			return event.UpdateEvent{ObjectOld: s.before, ObjectNew: s.written}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			s := shell{f: f, cache: &laggingCache{Client: f.client}}
			step := &stepper{decided: map[string]int{}}
			var hold chan struct{}
			running := make(chan struct{})
			s.r = reconcile.NewShell[*Widget](s.cache, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				if hold != nil {
					running <- struct{}{}
					<-hold
				}
				return step.Reconcile(ctx, w, s)
			}), reconcile.WithClock(f.clock))
			s.reconcileHeld = func() func() {
				hold = make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _ = s.r.Reconcile(f.context(t), reconcileRequest(f))
				}()
				<-running
				return func() { close(hold); <-done }
			}
			s.before = f.live(t)
			if _, err := s.r.Reconcile(f.context(t), reconcileRequest(f)); err != nil {
				t.Fatal(err)
			}
			s.written = f.live(t)
			if pass := s.r.IgnoreOwnWrites().Update(tc.event(t, s)); pass != tc.pass {
				t.Errorf("the predicate passed the event: %v, want %v", pass, tc.pass)
			}
		})
	}
}

// onEvent is an event recorder that calls do as the shell records an event: after the
// shell's write of the object, while the reconcile that made it still runs.
type onEvent struct{ do func() }

func (r onEvent) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {
	r.do()
}

// The reconcile that wrote an object needs the watch event of its write least of all, and
// it is usually still running when the event comes: the event is dropped all the same.
// Were it not, controller-runtime would run the object again as that reconcile returns.
func TestIgnoreOwnWritesDropsTheEventOfAWriteWhoseReconcileStillRuns(t *testing.T) {
	f := newFixture(t)
	before := f.live(t)
	var r reconcile.Shell[*Widget]
	passed := "not judged"
	r = reconcile.NewShell[*Widget](f.client, reconcile.LogicFunc[*Widget](func(_ context.Context, w *Widget, _ reconcile.Scope) requeue.Outcome {
		conditions.MarkTrue(w, conditions.Stalled, "NoImage", "the spec names no image")
		return requeue.Done()
	}), reconcile.WithClock(f.clock), reconcile.WithRecorder(onEvent{func() {
		passed = fmt.Sprint(r.IgnoreOwnWrites().Update(event.UpdateEvent{ObjectOld: before, ObjectNew: f.live(t)}))
	}}))
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if passed != "false" {
		t.Errorf("the predicate passed the event of the write while its reconcile ran: %s, want false", passed)
	}
}

// A reconcile that ran beside the one that wrote may have decided from the object as it was
// before the write, and ended without a word: the event of the write brings the object
// back, even once that reconcile has ended.
func TestIgnoreOwnWritesPassesTheEventOfAWriteMadeWhileAnotherReconcileRan(t *testing.T) {
	f := newFixture(t)
	step := &stepper{decided: map[string]int{}}
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	first.Store(true)
	r := reconcile.NewShell[*Widget](f.client, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		if first.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
		return step.Reconcile(ctx, w, s)
	}), reconcile.WithClock(f.clock))
	before := f.live(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.Reconcile(f.context(t), reconcileRequest(f)) // its write meets a conflict
	}()
	<-held
	if _, err := r.Reconcile(f.context(t), reconcileRequest(f)); err != nil {
		t.Fatal(err)
	}
	written := f.live(t)
	close(release)
	<-done
	if !r.IgnoreOwnWrites().Update(event.UpdateEvent{ObjectOld: before, ObjectNew: written}) {
		t.Error("the predicate dropped the event of a write made while another reconcile of the object ran; want it passed")
	}
}
