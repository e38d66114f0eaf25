package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// attempts is logic that notes when each reconcile began and returns what outcome says.
type attempts struct {
	mu      sync.Mutex
	at      []time.Time
	outcome func(n int) requeue.Outcome // n counts from 1
}

func (a *attempts) Reconcile(context.Context, *Widget, reconcile.Scope) requeue.Outcome {
	a.mu.Lock()
	a.at = append(a.at, time.Now())
	n := len(a.at)
	a.mu.Unlock()
	return a.outcome(n)
}

func (a *attempts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// gaps returns the time between each reconcile and the one before it.
func (a *attempts) gaps() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(a.at); i++ {
		gaps = append(gaps, a.at[i].Sub(a.at[i-1]).Round(10*time.Millisecond))
	}
	return gaps
}

// runWidgets runs a manager of one Widget controller with logic in a namespace of its own,
// counting the manager's requests, and creates a Widget there.
func runWidgets(t *testing.T, logic reconcile.Logic[*Widget], opts ...reconcile.Option) (*Widget, *reconciletest.Counter, client.Client) {
	t.Helper()
	ns := cp(t).Namespace(t)
	counter := &reconciletest.Counter{}
	reconciletest.StartManager(t, counter.Wrap(cp(t).Config), reconcile.Manager{
		Options:     manager.Options{Scheme: withBuiltins, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}},
		Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, logic, "widget-operator", opts...)},
	})
	c := cp(t).Client(t, withBuiltins)
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"}, Spec: WidgetSpec{Size: 1}}
	if err := c.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w, counter, c
}

// The backoff's delays, floor first and doubling, hold for a failure the shell reports in
// the status: the watch event of that status write is the shell's own and retries nothing.
func TestAFailedReconcileThatWritesItsStatusIsRetriedAfterTheBackoff(t *testing.T) {
	const floor = time.Second
	for _, tc := range []struct {
		name string
		err  error
		opts []reconcile.Option
	}{
		{"an error reported at once", errors.New("the spec names no image"), nil},
		{"a transient error reported on its second attempt", apierrors.NewServiceUnavailable("etcd is down"), []reconcile.Option{reconcile.WithReportAfter(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logic := &attempts{outcome: func(int) requeue.Outcome { return requeue.Retry(tc.err) }}
			runWidgets(t, logic, append(tc.opts, reconcile.WithBackoff(floor, time.Minute))...)
			reconciletest.Eventually(t, func(context.Context) error {
				if logic.count() < 1 {
					return errors.New("no reconcile yet")
				}
				return nil
			})
			// Attempts at 0, 1 s and 3 s; the fourth is due at 7 s.
			time.Sleep(3*floor + floor/2)
			gaps := logic.gaps()
			if len(gaps) != 2 || gaps[0] < floor*9/10 || gaps[1] < 2*floor*9/10 {
				t.Errorf("gaps between attempts %v in the first 3.5 s; want two, of at least 1s then 2s (the floor, then doubled)", gaps)
			}
		})
	}
}

// A reconcile that succeeds and writes the status costs one reconcile, and each request
// for a reconcile costs one more, with one write: the shell's own writes wake nothing.
// Whether the event of a write comes before the reconcile that made it has returned is a
// race, so the request is made several times.
func TestTheShellsOwnStatusWritesWakeNoReconcile(t *testing.T) {
	logic := &attempts{outcome: func(int) requeue.Outcome { return requeue.Done() }}
	w, counter, c := runWidgets(t, logic, reconcile.WithReconcileRequests(""))
	settle := func(want int, after string) {
		t.Helper()
		reconciletest.Eventually(t, func(context.Context) error {
			if n := logic.count(); n < want {
				return fmt.Errorf("%d reconcile(s)", n)
			}
			return nil
		})
		time.Sleep(1500 * time.Millisecond) // time for a reconcile too many to come
		if n := logic.count(); n != want {
			t.Fatalf("%d reconciles %s; want %d", n, after, want)
		}
	}
	settle(1, "after the Widget was created and made Ready")
	if n := counter.Count("patch", "widgets/status"); n != 1 {
		t.Errorf("%d status writes after the Widget was created; want 1 (Ready)", n)
	}
	for i := range 4 {
		counter.Reset()
		value := fmt.Sprint("request-", i)
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+reconcile.RequestedAtAnnotation+`":"`+value+`"}}}`))
		if err := c.Patch(t.Context(), w, patch); err != nil {
			t.Fatal(err)
		}
		settle(2+i, "after "+value)
		if n := counter.Writes(); n != 1 {
			t.Errorf("%s made %d writes (%v); want 1, its status.lastHandledReconcileAt", value, n, counter)
		}
		live := &Widget{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), live); err != nil {
			t.Fatal(err)
		}
		if live.Status.LastHandledReconcileAt != value {
			t.Errorf("lastHandledReconcileAt %q, want %q", live.Status.LastHandledReconcileAt, value)
		}
	}
}
