package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

func TestReconcileReportsATransientErrorOnlyOnceItPersists(t *testing.T) {
	widgets := schema.GroupResource{Group: "test.reconcilekit.io", Resource: "widgets"}
	tests := []struct {
		name        string
		err         error
		reportAfter []reconcile.Option
		wantQuiet   int // attempts that write nothing and record no event
	}{
		{"a 503 is retried quietly twice, reported on the third attempt", apierrors.NewServiceUnavailable("etcd is slow"), nil, 2},
		{"a timeout likewise", apierrors.NewTimeoutError("the request took too long", 1), nil, 2},
		{"a broken connection likewise", fmt.Errorf("reading the answer: %w", io.ErrUnexpectedEOF), nil, 2},
		{"a refusal a person must fix is reported at once", apierrors.NewForbidden(widgets, "widget", errors.New("no RBAC rule")), nil, 0},
		{"an error of the logic's own is reported at once", errors.New("the bucket is locked"), nil, 0},
		{"WithReportAfter(1) reports every failure", apierrors.NewServiceUnavailable("etcd is slow"), []reconcile.Option{reconcile.WithReportAfter(1)}, 0},
		{"WithReportAfter(5) waits longer", apierrors.NewServiceUnavailable("etcd is slow"), []reconcile.Option{reconcile.WithReportAfter(5)}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			fail := true
			r := f.reconciler(func(_ context.Context, w *Widget, _ reconcile.Scope) requeue.Outcome {
				w.Status.Phase = "Sized"
				if fail {
					return requeue.Retry(tt.err)
				}
				return requeue.Done()
			}, tt.reportAfter...)

			for attempt := 1; attempt <= tt.wantQuiet+1; attempt++ {
				f.counter.Reset()
				if _, err := f.reconcile(t, r); err == nil {
					t.Fatalf("attempt %d: Reconcile returned no error; want the logic's, retried", attempt)
				}
				writes, events := f.counter.Writes(), f.recorded()
				quiet := attempt <= tt.wantQuiet
				if quiet && (writes != 0 || len(events) != 0) {
					t.Errorf("attempt %d: %d writes, events %q; want none before the error is reported", attempt, writes, events)
				}
				if !quiet && (writes != 1 || len(events) != 1 || !strings.HasPrefix(events[0], "Warning ReconcileError")) {
					t.Errorf("attempt %d: %d writes, events %q; want the status once and a Warning ReconcileError", attempt, writes, events)
				}
			}
			if c := conditions.Find(f.live(t), conditions.Reconciling); c == nil || c.Reason != reconcile.ReasonRetrying {
				t.Errorf("Reconciling = %+v once reported; want reason %s", c, reconcile.ReasonRetrying)
			}

			// A success ends the count: the next failure is quiet again.
			fail = false
			if _, err := f.reconcile(t, r); err != nil {
				t.Fatal(err)
			}
			fail = true
			f.counter.Reset()
			_, _ = f.reconcile(t, r)
			if quiet := tt.wantQuiet > 0; quiet != (f.counter.Writes() == 0) {
				t.Errorf("the first failure after a success wrote %d times; want quiet %t", f.counter.Writes(), quiet)
			}
		})
	}
}

// TestTenPercentOfWritesFailingCostNoStatusWrite reconciles Widgets that each create a
// ConfigMap through an API server that fails every tenth create with a 500: no object
// fails three times in a row, so none reports an error, and the only status writes are
// the one each Widget makes when it is done.
func TestTenPercentOfWritesFailingCostNoStatusWrite(t *testing.T) {
	const objects = 30
	ns := cp(t).Namespace(t)
	var creates atomic.Int64
	faults := &reconciletest.Faults{Verbs: []string{"create"}, Resources: []string{"configmaps"}, Rate: 0.1,
		Random: func() float64 {
			if creates.Add(1)%10 == 0 {
				return 0 // fails
			}
			return 0.5
		}}
	counter := &reconciletest.Counter{}
	c, err := client.New(counter.Wrap(faults.Wrap(cp(t).Config)), client.Options{Scheme: withBuiltins})
	if err != nil {
		t.Fatal(err)
	}
	recorder := events.NewFakeRecorder(10 * objects)
	r := reconcile.NewShell(c, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Data: map[string]string{"size": fmt.Sprint(w.Spec.Size)}}
		if _, _, err := ownership.Ensure(ctx, s.Writer, w, cm, ownership.CreateOnly()); err != nil {
			return requeue.Retry(err)
		}
		w.Status.Phase = "Sized"
		return requeue.Done()
	}), reconcile.WithChildren(&corev1.ConfigMap{}), reconcile.WithRecorder(recorder), reconcile.WithClock(reconciletest.NewClock(now)))

	for i := range objects {
		w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w-%d", i)}, Spec: WidgetSpec{Size: 1}}
		if err := c.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	counter.Reset()
	failures := 0
	for i := range objects {
		req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("w-%d", i)}}
		for attempt := 0; ; attempt++ {
			if attempt == 5 {
				t.Fatalf("%s: still failing after 5 attempts", req.Name)
			}
			if _, err := r.Reconcile(t.Context(), req); err == nil {
				break
			}
			failures++
		}
	}
	statusWrites := counter.Count("patch", "widgets/status")
	t.Logf("%d Widgets, %d creates, %d failed reconciles; %d status writes, %d events", objects, creates.Load(), failures, statusWrites, len(recorder.Events))
	if failures == 0 {
		t.Fatal("no create failed: the scenario tried nothing")
	}
	if statusWrites != objects || len(recorder.Events) != 0 {
		t.Errorf("%d status writes and %d events; want %d writes, one a Widget, and no event: a transient failure must cost nothing",
			statusWrites, len(recorder.Events), objects)
	}
}

func TestBackoffDoublesFromItsFloorToItsCeilingPerObject(t *testing.T) {
	if reconcile.RateLimiter() != nil {
		t.Error("without WithBackoff the controller must keep controller-runtime's rate limiter")
	}
	limiter := reconcile.RateLimiter(reconcile.WithBackoff(time.Second, 10*time.Second))
	a, b := ctrl.Request{NamespacedName: client.ObjectKey{Name: "a"}}, ctrl.Request{NamespacedName: client.ObjectKey{Name: "b"}}
	var got []time.Duration
	for range 6 {
		got = append(got, limiter.When(a))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays of one object failing again and again: %v, want %v", got, want)
	}
	if d := limiter.When(b); d != time.Second {
		t.Errorf("another object's first delay: %v, want the floor: one object's failures must not slow the others", d)
	}
	limiter.Forget(a)
	if d := limiter.When(a); d != time.Second {
		t.Errorf("after a success, the delay is %v, want the floor again", d)
	}
}

// The delays the backoff chooses run in real time; each is observed where a test or a
// dashboard can read it.
func TestTheBackoffsDelaysAreObservedByKind(t *testing.T) {
	limiter := reconcile.ObservedRateLimiter("Gadget", reconcile.WithBackoff(time.Second, time.Minute))
	req := ctrl.Request{NamespacedName: client.ObjectKey{Name: "a"}}
	for range 3 {
		limiter.When(req)
	}
	h := telemetry.RetryDelay.WithLabelValues("Gadget").(prometheus.Histogram)
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%d delays, %gs in all", m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()); got != "3 delays, 7s in all" {
		t.Errorf("reconcilekit_retry_delay_seconds{kind=Gadget}: %s; want 3 delays, 7s in all (1s, 2s, 4s)", got)
	}
}
