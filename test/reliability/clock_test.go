package reliability

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	atv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/schedule"
)

// steppedClock is a wall clock that a time daemon steps: the real time, plus an offset
// that moves at a step. It keeps the highest time it has given, the latest an operator
// can have believed it was.
type steppedClock struct {
	mu      sync.Mutex
	offset  time.Duration
	highest time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().Round(0).Add(c.offset) // a wall clock: no monotonic reading
	if now.After(c.highest) {
		c.highest = now
	}
	return now
}

func (c *steppedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *steppedClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func (c *steppedClock) latest() time.Time {
	c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.highest
}

// tolerance is how early the At operator may start a command (at.go).
const tolerance = 2 * time.Second

func TestAtRunsEachCommandOnceAndNeverEarlyWhileItsClockIsStepped(t *testing.T) {
	n, watch := 3, 10*time.Second
	if *full {
		// Long enough for the operator to look at its clock again after the step back.
		n, watch = 20, 70*time.Second
	}
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	clock := &steppedClock{}
	var created ledger
	var mu sync.Mutex
	var early []string
	// Each pod, as the API server creates it, against the latest time the operator could
	// have read: a command may start no earlier than its schedule, less the tolerance.
	cfg := reconciletest.Intercept(created.wrap(atOperator.config(t)), func(r *reconciletest.Request) (*http.Response, error) {
		resp, err := r.Send()
		if err == nil && r.Verb == "create" && r.Resource == "pods" && resp.StatusCode == http.StatusCreated {
			latest := clock.latest()
			name := nameIn(&resp.Body)
			var a atv1alpha1.At
			if err := admin.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &a); err == nil {
				if when, err := schedule.ParseTime(a.Spec.Schedule); err == nil && latest.Before(when.Add(-tolerance)) {
					mu.Lock()
					early = append(early, fmt.Sprintf("%s started at %s, scheduled for %s", name, latest.Format(time.RFC3339), a.Spec.Schedule))
					mu.Unlock()
				}
			}
		}
		return resp, err
	})
	watchStatus(t, ns, atOperator)
	stepped := *atOperator
	stepped.controller = at.New(reconcile.WithClock(clock))
	stepped.start(t, cfg, ns)

	createAts := func(group string, when time.Time) {
		t.Helper()
		for i := range n {
			if err := admin.Create(t.Context(), newAt(ns, fmt.Sprintf("%s-%d", group, i), when)); err != nil {
				t.Fatal(err)
			}
		}
	}
	awaitGroup := func(group string, limit time.Duration) {
		t.Helper()
		await(t, limit, func(ctx context.Context) error { return atsDone(ctx, admin, ns, group, n) })
	}
	noPods := func(group string) {
		t.Helper()
		for i := range n {
			if c := created.count(fmt.Sprintf("%s-%d", group, i)); c > 0 {
				t.Errorf("%s-%d ran before its time", group, i)
			}
		}
	}

	// Due now, and due in half an hour.
	createAts("now", clock.Now().Add(3*time.Second))
	createAts("in-half-an-hour", clock.Now().Add(30*time.Minute))
	awaitGroup("now", 2*time.Minute)
	noPods("in-half-an-hour")

	// The clock jumps an hour forward: what was due in half an hour is half an hour late.
	clock.step(time.Hour)
	forward := time.Now()
	awaitGroup("in-half-an-hour", 3*time.Minute)
	t.Logf("half an hour late after the step forward, the commands ran within %v", time.Since(forward).Round(100*time.Millisecond))

	// Commands run a few minutes ago, by a clock about to step back ten minutes: for it,
	// they will be due in the future again.
	createAts("ran", clock.Now().Add(-5*time.Minute))
	awaitGroup("ran", 2*time.Minute)
	createAts("in-five-minutes", clock.Now().Add(5*time.Minute))
	clock.step(-10 * time.Minute)
	createAts("after-the-step-back", clock.Now().Add(3*time.Second))
	awaitGroup("after-the-step-back", 2*time.Minute)
	// What was due in five minutes is now due in fifteen: it waits.
	time.Sleep(watch)
	noPods("in-five-minutes")

	// The clock is set right again, ten minutes and more forward.
	clock.step(15 * time.Minute)
	awaitGroup("in-five-minutes", 3*time.Minute)
	await(t, time.Minute, func(ctx context.Context) error { return converged(ctx, admin, ns, atOperator) })

	pods := created.check(t)
	mu.Lock()
	defer mu.Unlock()
	for _, e := range early {
		t.Errorf("a command ran early: %s", e)
	}
	t.Logf("%d Ats through a step of an hour forward and ten minutes back; %d pods, none twice, none early", 5*n, pods)
}

// atsDone returns nil once the n Ats named group-0, group-1, ... are DONE and Succeeded.
func atsDone(ctx context.Context, c client.Client, ns, group string, n int) error {
	for i := range n {
		var a atv1alpha1.At
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("%s-%d", group, i)}, &a); err != nil {
			return err
		}
		if a.Status.Phase != atv1alpha1.PhaseDone {
			return fmt.Errorf("%s is %q", a.Name, a.Status.Phase)
		}
	}
	return nil
}
