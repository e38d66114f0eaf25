package controller_test

// What standard clients read from an At: kstatus' verdict (the library Flux and cli-utils
// compute status with), the condition `kubectl wait --for=condition=Ready` waits for, and
// the events on the At.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestStatusOfAnAtAsStandardClientsReadIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before makes what exists in the namespace before the At.
		before   func(t *testing.T, e *env)
		schedule time.Duration // from now
		command  string
		// want is where the At settles: its phase, the verdict on it and its Ready
		// condition's reason.
		phase  string
		want   verdict
		reason string
		// event is the event recorded on the At on its way there, if any.
		event *wantEvent
	}{
		{
			name:     "its command succeeded: Current, and Ready",
			schedule: -time.Hour, command: "echo done",
			phase: cnatv1alpha1.PhaseDone,
			want:  verdict{status: kstatus.CurrentStatus, ready: metav1.ConditionTrue, waited: true}, reason: "Reconciled",
			event: &wantEvent{corev1.EventTypeNormal, "Ready"},
		},
		{
			// The simulated node fails a command whose last word is "exit 1", as a shell would.
			name:     "its command failed: Failed",
			schedule: -time.Hour, command: "exit 1",
			phase: cnatv1alpha1.PhaseDone,
			want:  verdict{status: kstatus.FailedStatus, ready: metav1.ConditionFalse}, reason: "CommandFailed",
			event: &wantEvent{corev1.EventTypeWarning, "CommandFailed"},
		},
		{
			// An At may start a day late at most; it waits for a new schedule.
			name:     "its schedule passed two days ago: Failed",
			schedule: -48 * time.Hour, command: "echo done",
			phase: cnatv1alpha1.PhasePending,
			want:  verdict{status: kstatus.FailedStatus, ready: metav1.ConditionFalse}, reason: "ScheduleMissed",
			event: &wantEvent{corev1.EventTypeWarning, "ScheduleMissed"},
		},
		{
			name:     "a pod of its name that it does not own: Failed",
			before:   foreignPod,
			schedule: -time.Hour, command: "echo done",
			phase: cnatv1alpha1.PhaseRunning,
			want:  verdict{status: kstatus.FailedStatus, ready: metav1.ConditionFalse}, reason: "PodNameTaken",
			event: &wantEvent{corev1.EventTypeWarning, "PodNameTaken"},
		},
		{
			name:     "its schedule is an hour away: InProgress",
			schedule: time.Hour, command: "echo later",
			phase: cnatv1alpha1.PhasePending,
			want:  verdict{status: kstatus.InProgressStatus, ready: metav1.ConditionFalse}, reason: "Pending",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.before != nil {
				tt.before(t, e)
			}
			e.Run(t)
			at := e.create(t, "report", time.Now().Add(tt.schedule), tt.command)

			var got verdict
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(at), at); err != nil {
					return err
				}
				got = verdictOf(t, at)
				// kstatus reads an object without a status as Current: wait for the
				// operator's verdict on this generation.
				if at.Status.ObservedGeneration != at.Generation || at.Status.Phase != tt.phase || got.status != tt.want.status {
					return fmt.Errorf("the verdict on generation %d in phase %q is %s; want %s in phase %s; status %+v",
						at.Generation, at.Status.Phase, got, tt.want.status, tt.phase, at.Status)
				}
				return nil
			})
			if got.ready != tt.want.ready || got.waited != tt.want.waited {
				t.Errorf("the verdict is %s; want %s", got, tt.want)
			}
			if ready := conditions.Find(at, conditions.Ready); ready == nil || ready.Reason != tt.reason {
				t.Errorf("want Ready because %s; have %+v", tt.reason, ready)
			}
			if tt.event != nil {
				ev := e.awaitEvent(t, at, *tt.event)
				t.Logf("kstatus: %s; event: %s %s: %s", got, ev.Type, ev.Reason, ev.Note)
			} else {
				t.Logf("kstatus: %s", got)
			}
		})
	}
}

// verdict is what standard clients read from an object's status.
type verdict struct {
	// status and message are kstatus'.
	status  kstatus.Status
	message string
	// ready is the Ready condition's status, "" without one.
	ready metav1.ConditionStatus
	// waited is whether `kubectl wait --for=condition=Ready` would return.
	waited bool
}

func (v verdict) String() string {
	return fmt.Sprintf("kstatus %s (%q), Ready=%q, kubectl wait returns: %t", v.status, v.message, v.ready, v.waited)
}

// verdictOf reads obj as standard clients do: unstructured.
func verdictOf(t *testing.T, obj client.Object) verdict {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	// A typed object read through a client has no kind; kstatus' messages name it.
	gvk, err := apiutil.GVKForObject(obj, operator.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	u.SetGroupVersionKind(gvk)
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	v := verdict{status: res.Status, message: res.Message}
	v.ready, v.waited = kubectlWaitReady(u)
	return v
}

// kubectlWaitReady returns the Ready condition's status, and whether `kubectl wait
// --for=condition=Ready` would return, by kubectl's rule (k8s.io/kubectl/pkg/cmd/wait,
// ConditionalWait.checkCondition): the condition is True and was not observed for an
// older generation, by its own observedGeneration or else the status'.
func kubectlWaitReady(u *unstructured.Unstructured) (metav1.ConditionStatus, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cond, _ := c.(map[string]any)
		if typ, _, _ := unstructured.NestedString(cond, "type"); !strings.EqualFold(typ, conditions.Ready) {
			continue
		}
		s, _, _ := unstructured.NestedString(cond, "status")
		observed, found, _ := unstructured.NestedInt64(cond, "observedGeneration")
		if !found {
			observed, found, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		}
		stale := found && observed < u.GetGeneration()
		return metav1.ConditionStatus(s), !stale && strings.EqualFold(s, string(metav1.ConditionTrue))
	}
	return "", false
}

// wantEvent is an event the operator records on an object.
type wantEvent struct{ typ, reason string }

// awaitEvent waits until an event of the type and reason regarding obj is in its
// namespace, and returns it.
func (e *env) awaitEvent(t *testing.T, obj client.Object, want wantEvent) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	reconciletest.Eventually(t, func(ctx context.Context) error {
		var events eventsv1.EventList
		if err := e.List(ctx, &events, client.InNamespace(e.Namespace)); err != nil {
			return err
		}
		var others []string
		for _, ev := range events.Items {
			if ev.Regarding.UID != obj.GetUID() {
				continue
			}
			if ev.Type == want.typ && ev.Reason == want.reason {
				found = ev
				return nil
			}
			others = append(others, ev.Type+" "+ev.Reason)
		}
		return fmt.Errorf("no %s %s event regarding %s; there are %v", want.typ, want.reason, obj.GetName(), others)
	})
	return found
}

// foreignPod creates a pod with the At's name and no owner.
func foreignPod(t *testing.T, e *env) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "report"},
		Spec:       ownership.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	}
	if err := e.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
}
