package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// tolerance is how early the operator may run a command: the original cnat operator's.
const tolerance = 2 * time.Second

func TestAtWaitsForItsScheduleThenRunsItsCommandOnce(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	// Phases pass quickly; a watch sees every one.
	watcher, err := client.NewWithWatch(operator.ControlPlane.Config, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ats, err := watcher.Watch(t.Context(), &cnatv1alpha1.AtList{}, client.InNamespace(e.Namespace))
	if err != nil {
		t.Fatal(err)
	}
	defer ats.Stop()
	schedule := time.Now().Add(10 * time.Second).Truncate(time.Second)
	at := e.create(t, "report", schedule, "echo done")

	var phases []string
	var running time.Time
	deadline := time.After(2 * time.Minute)
	for !slices.Contains(phases, cnatv1alpha1.PhaseDone) {
		select {
		case ev, ok := <-ats.ResultChan():
			if !ok {
				t.Fatalf("the watch ended; phases so far: %v", phases)
			}
			seen, ok := ev.Object.(*cnatv1alpha1.At)
			if !ok || seen.Status.Phase == "" || len(phases) > 0 && phases[len(phases)-1] == seen.Status.Phase {
				continue
			}
			if seen.Status.Phase == cnatv1alpha1.PhaseRunning {
				running = time.Now()
			}
			phases = append(phases, seen.Status.Phase)
		case <-deadline:
			t.Fatalf("the At is not DONE; phases so far: %v", phases)
		}
	}

	if want := []string{cnatv1alpha1.PhasePending, cnatv1alpha1.PhaseRunning, cnatv1alpha1.PhaseDone}; !slices.Equal(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if early := schedule.Add(-tolerance); running.Before(early) {
		t.Errorf("RUNNING at %s, before the schedule %s less the tolerance", running.Format(time.RFC3339Nano), schedule.Format(time.RFC3339))
	}
	if pod := e.onlyPod(t, at); pod.CreationTimestamp.Time.Before(schedule.Add(-tolerance)) {
		t.Errorf("the pod was created at %s, before the schedule %s less the tolerance", pod.CreationTimestamp.Format(time.RFC3339), schedule.Format(time.RFC3339))
	}
}

func TestAtRejectsInvalidInput(t *testing.T) {
	reconciletest.SkipShort(t) // it uses the control plane without an Env
	c, ns := operator.ControlPlane.Client(t, operator.Scheme), operator.ControlPlane.Namespace(t)
	for _, spec := range []struct {
		name     string
		schedule string
		command  string
	}{
		{"a schedule that is not a time", "tomorrow at noon", "echo done"},
		{"a schedule with an offset instead of Z", "2030-01-02T15:04:05+01:00", "echo done"},
		{"a schedule without a time zone", "2030-01-02T15:04:05", "echo done"},
		{"an empty schedule", "", "echo done"},
		{"an empty command", "2030-01-02T15:04:05Z", ""},
	} {
		t.Run(spec.name, func(t *testing.T) {
			at := &cnatv1alpha1.At{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "invalid-"},
				Spec:       cnatv1alpha1.AtSpec{Schedule: spec.schedule, Command: spec.command},
			}
			if err := c.Create(t.Context(), at); !apierrors.IsInvalid(err) {
				t.Errorf("Create = %v, want Invalid", err)
			}
		})
	}
}

func TestDeletingAnAtGarbageCollectsItsPod(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	at := e.create(t, "report", time.Now().Add(-time.Hour), "echo done")
	e.awaitPhase(t, at, cnatv1alpha1.PhaseDone)

	if err := e.Delete(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		err := e.Get(ctx, client.ObjectKeyFromObject(at), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the pod is still there (%v)", err)
	})
}

func TestConvergedAtsMakeNoWritesWhenReconciledAgain(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	done := e.create(t, "done", time.Now().Add(-time.Hour), "echo done")
	pending := e.create(t, "pending", time.Now().Add(time.Hour), "echo later")
	// An At stalled by a pod of its name that it does not own, which the manager's cache
	// does not hold: it reads the pod again, and sends no create the API server refuses.
	foreignPod(t, e, "taken")
	taken := e.create(t, "taken", time.Now().Add(-time.Hour), "echo taken")
	e.awaitPhase(t, done, cnatv1alpha1.PhaseDone)
	e.awaitPhase(t, pending, cnatv1alpha1.PhasePending)
	e.awaitSucceeded(t, taken, "PodNameTaken")
	first.Stop()

	// A restart reconciles every object again, over a cache filled from scratch.
	reconciletest.ExpectNoWrites(t, &e.Requests, func() {
		e.Run(t).AwaitReconciles("at", 3)
	})
	t.Logf("requests of the restarted operator until it had reconciled every At again:\n%s", &e.Requests)
	e.onlyPod(t, done)
}

func TestAtWhoseMissedScheduleIsSetAnewNoLongerSaysItMissedIt(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	at := e.create(t, "report", time.Now().Add(-48*time.Hour), "echo done")
	e.awaitSucceeded(t, at, "ScheduleMissed")

	at.Spec.Schedule = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if err := e.Update(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		if at.Status.ObservedGeneration != at.Generation {
			return fmt.Errorf("status of generation %d, want %d", at.Status.ObservedGeneration, at.Generation)
		}
		return nil
	})
	if at.Status.Phase != cnatv1alpha1.PhasePending {
		t.Errorf("phase %q, want %q", at.Status.Phase, cnatv1alpha1.PhasePending)
	}
	if c := conditions.Find(at, controller.Succeeded); c != nil {
		t.Errorf("the At waits for its new schedule and still says %s %s: %s", c.Type, c.Reason, c.Message)
	}
}

// awaitSucceeded waits until the At's Succeeded condition has the reason, and keeps it up
// to date.
func (e *env) awaitSucceeded(t *testing.T, at *cnatv1alpha1.At, reason string) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		if c := conditions.Find(at, controller.Succeeded); c == nil || c.Reason != reason {
			return fmt.Errorf("Succeeded is %+v, want the reason %s", c, reason)
		}
		return nil
	})
}

// create creates an At in the test's namespace.
func (e *env) create(t *testing.T, name string, schedule time.Time, command string) *cnatv1alpha1.At {
	t.Helper()
	at := &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: name},
		Spec:       cnatv1alpha1.AtSpec{Schedule: schedule.UTC().Format(time.RFC3339), Command: command},
	}
	if err := e.Create(t.Context(), at); err != nil {
		t.Fatal(err)
	}
	return at
}

// awaitPhase waits until the At is in the phase, and keeps it up to date.
func (e *env) awaitPhase(t *testing.T, at *cnatv1alpha1.At, phase string) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(at), at); err != nil {
			return err
		}
		if at.Status.Phase != phase {
			return fmt.Errorf("phase %q, want %q; status %+v", at.Status.Phase, phase, at.Status)
		}
		return nil
	})
}

// onlyPod returns the At's pod and fails the test unless it is the only pod the At ever
// had: the operator may not delete pods, and the garbage collector leaves them while the
// At exists, so the pods there are all the pods there were.
func (e *env) onlyPod(t *testing.T, at *cnatv1alpha1.At) *corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := e.List(t.Context(), &pods, client.InNamespace(at.Namespace)); err != nil {
		t.Fatal(err)
	}
	var owned []*corev1.Pod
	for i := range pods.Items {
		if ownership.IsControlledBy(&pods.Items[i], at) {
			owned = append(owned, &pods.Items[i])
		}
	}
	if len(owned) != 1 {
		t.Fatalf("the At has %d pods, want exactly one", len(owned))
	}
	return owned[0]
}
