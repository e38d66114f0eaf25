package controller_test

// What standard clients read from an At: kstatus' verdict (the library Flux and cli-utils
// compute status with), the condition `kubectl wait --for=condition=Ready` waits for, and
// the events on the At.

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
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
		want   reconciletest.Verdict
		reason string
		// event is the event recorded on the At on its way there, if any.
		event *reconciletest.Event
	}{
		{
			name:     "its command succeeded: Current, and Ready",
			schedule: -time.Hour, command: "echo done",
			phase: cnatv1alpha1.PhaseDone,
			want:  reconciletest.Verdict{Status: kstatus.CurrentStatus, Ready: metav1.ConditionTrue, Waited: true}, reason: "Reconciled",
		},
		{
			// The simulated node fails a command whose last word is "exit 1", as a shell would.
			name:     "its command failed: Failed",
			schedule: -time.Hour, command: "exit 1",
			phase: cnatv1alpha1.PhaseDone,
			want:  reconciletest.Verdict{Status: kstatus.FailedStatus, Ready: metav1.ConditionFalse}, reason: "CommandFailed",
			event: &reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "CommandFailed"},
		},
		{
			// An At may start a day late at most; it waits for a new schedule.
			name:     "its schedule passed two days ago: Failed",
			schedule: -48 * time.Hour, command: "echo done",
			phase: cnatv1alpha1.PhasePending,
			want:  reconciletest.Verdict{Status: kstatus.FailedStatus, Ready: metav1.ConditionFalse}, reason: "ScheduleMissed",
			event: &reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "ScheduleMissed"},
		},
		{
			name:     "a pod of its name that it does not own: Failed",
			before:   func(t *testing.T, e *env) { foreignPod(t, e, "report") },
			schedule: -time.Hour, command: "echo done",
			phase: cnatv1alpha1.PhaseRunning,
			want:  reconciletest.Verdict{Status: kstatus.FailedStatus, Ready: metav1.ConditionFalse}, reason: "PodNameTaken",
			event: &reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "PodNameTaken"},
		},
		{
			name:     "its schedule is an hour away: InProgress",
			schedule: time.Hour, command: "echo later",
			phase: cnatv1alpha1.PhasePending,
			want:  reconciletest.Verdict{Status: kstatus.InProgressStatus, Ready: metav1.ConditionFalse}, reason: "Pending",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.before != nil {
				tt.before(t, e)
			}
			e.Run(t)
			at := e.create(t, "report", time.Now().Add(tt.schedule), tt.command)

			var got reconciletest.Verdict
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(at), at); err != nil {
					return err
				}
				got = reconciletest.VerdictOf(t, operator.Scheme, at)
				// Wait for the operator's verdict on this generation.
				if at.Status.ObservedGeneration != at.Generation || at.Status.Phase != tt.phase || got.Status != tt.want.Status {
					return fmt.Errorf("the verdict on generation %d in phase %q is %s; want %s in phase %s; status %+v",
						at.Generation, at.Status.Phase, got, tt.want.Status, tt.phase, at.Status)
				}
				return nil
			})
			if got.Ready != tt.want.Ready || got.Waited != tt.want.Waited {
				t.Errorf("the verdict is %s; want %s", got, tt.want)
			}
			if ready := conditions.Find(at, conditions.Ready); ready == nil || ready.Reason != tt.reason {
				t.Errorf("want Ready because %s; have %+v", tt.reason, ready)
			}
			if tt.event != nil {
				ev := e.AwaitEvent(t, at, *tt.event)
				t.Logf("kstatus: %s; event: %s %s: %s", got, ev.Type, ev.Reason, ev.Note)
			} else {
				t.Logf("kstatus: %s", got)
			}
		})
	}
}

// foreignPod creates a pod named name and no owner.
func foreignPod(t *testing.T, e *env, name string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: name},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	}
	if err := e.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
}

func TestStatusOfAnAtBeingDeletedIsTerminating(t *testing.T) {
	const hold = "test.reconcilekit.io/hold"
	e := newEnv(t)
	e.Run(t)
	at := e.create(t, "report", time.Now().Add(time.Hour), "echo later")
	// A finalizer of the test's own keeps the At while it is being deleted.
	before := at.DeepCopy()
	controllerutil.AddFinalizer(at, hold)
	if err := e.Patch(t.Context(), at, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := e.Get(ctx, client.ObjectKeyFromObject(at), at); err == nil {
			before := at.DeepCopy()
			controllerutil.RemoveFinalizer(at, hold)
			if err := e.Patch(ctx, at, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
				t.Errorf("removing the finalizer %s: %v", hold, err)
			}
		}
	})
	if err := e.Delete(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		if got := reconciletest.VerdictOf(t, operator.Scheme, at); got.Status != kstatus.TerminatingStatus || got.Waited {
			return fmt.Errorf("the verdict on an At being deleted is %s; want Terminating, and kubectl wait not returning", got)
		}
		return nil
	})
}
