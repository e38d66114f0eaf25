// Package controller holds the At controller: it waits until an At's schedule, runs its
// command once in a pod, and records how the command ended. The phases PENDING, RUNNING
// and DONE are a phase.Machine.
package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/phase"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/schedule"
	"github.com/reconcilekit/reconcilekit/workload"
)

// Concurrency is how many Ats the manager reconciles at a time unless its
// --max-concurrent-reconciles flag says otherwise. A reconcile mostly waits for the API
// server, and with controller-runtime's default of one, a thousand new objects would
// wait in line for each other's requests.
const Concurrency = 16

const (
	// Image runs the command.
	Image = "busybox:1.36"
	// Succeeded is the condition that records how the command ended.
	Succeeded = "Succeeded"
	// tolerance is how early a schedule counts as due, as in the original cnat operator.
	tolerance = 2 * time.Second
	// startingDeadline is how late a command may still start, after an outage say.
	startingDeadline = 24 * time.Hour
	// clockRecheck is the longest a pending At waits before it reads the clock again:
	// a wait computed before the wall clock steps forward (a time daemon's correction)
	// would otherwise start the command as late as the step is long.
	clockRecheck = time.Minute
	// foreignRecheck is how often an At blocked by a pod it does not own looks again.
	foreignRecheck = time.Minute
	// managedBy labels the pods of every At, so the manager caches those pods only.
	managedBy = "at-operator"
	// reasonPodNameTaken is the reason an At is stalled by a pod of its name that it
	// does not control.
	reasonPodNameTaken = "PodNameTaken"
)

// New declares the At controller, with opts added to its own (a test's clock, say, or the
// manager's --max-concurrent-reconciles): the phase machine, and a pod of its own for each
// At, of Ats alone in the manager's cache.
func New(opts ...reconcile.Option) *reconcile.Controller[*cnatv1alpha1.At] {
	return reconcile.For(&cnatv1alpha1.At{}, Machine(), managedBy, append([]reconcile.Option{
		reconcile.WithReconcileRequests(""),
		reconcile.WithConcurrency(Concurrency),
		reconcile.WithChildren(&corev1.Pod{}),
		// A cluster-wide pod cache would cost memory for every pod of the cluster.
		reconcile.WithCache(&corev1.Pod{}, cache.ByObject{
			Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": managedBy}),
		}),
	}, opts...)...).
		WithSuspend(func(obj *cnatv1alpha1.At) bool { return obj.Spec.Suspend })
}

// Machine returns the At controller's logic, the phase machine New declares. The time is
// the reconcile's (Scope.Now).
func Machine() *phase.Machine[*cnatv1alpha1.At] {
	m, err := phase.New(cnatv1alpha1.PhasePending, map[string]phase.State[*cnatv1alpha1.At]{
		cnatv1alpha1.PhasePending: {Handle: pending, Next: []string{cnatv1alpha1.PhaseRunning}},
		cnatv1alpha1.PhaseRunning: {Handle: running, Next: []string{cnatv1alpha1.PhaseDone}},
		cnatv1alpha1.PhaseDone:    {},
	})
	if err != nil {
		panic(err) // the phases above are fixed: a test proves them
	}
	return m
}

// stall records that the At cannot go on until its spec or the cluster changes: Succeeded
// False and Stalled, both with reason and message, so that kstatus reports it Failed.
func stall(at *cnatv1alpha1.At, reason, format string, args ...any) {
	conditions.MarkFalse(at, Succeeded, reason, format, args...)
	conditions.MarkTrue(at, conditions.Stalled, reason, format, args...)
}

// pending waits for the schedule. The schema already refuses a malformed one; should one
// get through, it is reported and waits for a new spec instead of retrying.
func pending(_ context.Context, at *cnatv1alpha1.At, s reconcile.Scope) (string, requeue.Outcome) {
	when, err := schedule.ParseTime(at.Spec.Schedule)
	if err != nil {
		stall(at, "InvalidSchedule", "%v", err)
		return "", requeue.Done()
	}
	now := s.Now
	// A Succeeded condition in this phase is a stall of an older spec (an invalid or
	// missed schedule): this one no longer holds, and the At must not go on reporting it.
	conditions.Remove(at, Succeeded)
	if wait, due := schedule.Until(when, now, tolerance); !due {
		return "", requeue.After(min(wait, clockRecheck))
	}
	if late := now.Sub(when); late > startingDeadline {
		// A command a day late is more likely to do harm than good. A new schedule (a new
		// generation) brings the At back here.
		stall(at, "ScheduleMissed", "the schedule %s passed %s ago, more than the %s an At may start late; set a new schedule to run the command",
			at.Spec.Schedule, late.Truncate(time.Second), startingDeadline)
		return "", requeue.Done()
	}
	return cnatv1alpha1.PhaseRunning, requeue.Done()
}

// running starts the command's pod once, then waits for it to end. The pod's name is the
// At's, so a retry finds the pod it already created instead of creating a second; a pod
// that disappears before it ends is reported, never replaced.
func running(ctx context.Context, at *cnatv1alpha1.At, s reconcile.Scope) (string, requeue.Outcome) {
	pod := &corev1.Pod{}
	if at.Status.PodName == "" {
		if taken := conditions.Find(at, Succeeded); taken != nil && taken.Reason == reasonPodNameTaken {
			// The manager caches the operator's pods alone: the pod in the way is not in
			// its cache, and a create would only be refused again. The API server says
			// whether it is still there.
			err := s.APIReader.Get(ctx, client.ObjectKey{Namespace: at.Namespace, Name: at.Name}, pod)
			switch {
			case err == nil && !metav1.IsControlledBy(pod, at):
				stall(at, reasonPodNameTaken, "%v: delete it or rename this At", &ownership.NotControlledError{
					Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, Controller: metav1.GetControllerOf(pod)})
				return "", requeue.After(foreignRecheck)
			case err != nil && !apierrors.IsNotFound(err):
				return "", requeue.Retry(err)
			}
		}
		created, _, err := ownership.Ensure(ctx, s.Writer, at, CommandPod(at), ownership.CreateOnly())
		switch {
		case ownership.IsNotControlled(err):
			stall(at, reasonPodNameTaken, "%v: delete it or rename this At", err)
			return "", requeue.After(foreignRecheck)
		case err != nil:
			// Said on the At too: a pod the cluster refuses (a quota, an admission policy)
			// is retried, but only a person can fix what refuses it.
			conditions.MarkUnknown(at, Succeeded, "PodNotCreated", "creating pod %s: %v", at.Name, err)
			return "", requeue.Retry(err)
		}
		at.Status.PodName, pod = created.Name, created
		// What kept the pod from being created (a pod in the way, a refusal) is over.
		conditions.Remove(at, Succeeded)
	} else if err := getPod(ctx, s, client.ObjectKey{Namespace: at.Namespace, Name: at.Status.PodName}, pod); apierrors.IsNotFound(err) {
		conditions.MarkFalse(at, Succeeded, "PodLost", "pod %s was deleted before the command ended; it is not run again", at.Status.PodName)
		return cnatv1alpha1.PhaseDone, requeue.Done()
	} else if err != nil {
		return "", requeue.Retry(err)
	}

	var ended *corev1.ContainerStateTerminated
	for _, cs := range pod.Status.ContainerStatuses {
		ended = cs.State.Terminated
	}
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		conditions.MarkTrue(at, Succeeded, "CommandSucceeded", "%s", message(ended, "the command succeeded"))
	case pod.Status.Phase == corev1.PodFailed:
		conditions.MarkFalse(at, Succeeded, "CommandFailed", "%s", message(ended, "the command failed"))
	default:
		return "", requeue.Done() // the pod's changes bring the At back
	}
	if ended != nil {
		at.Status.ExitCode = &ended.ExitCode
	}
	return cnatv1alpha1.PhaseDone, requeue.Done()
}

// getPod reads a pod from the cache or, when the cache has not seen it yet, from the API
// server: a pod created a moment ago may not be cached, and only the API server can say
// that it is gone.
func getPod(ctx context.Context, s reconcile.Scope, key client.ObjectKey, pod *corev1.Pod) error {
	if err := s.Client.Get(ctx, key, pod); !apierrors.IsNotFound(err) {
		return err
	}
	return s.APIReader.Get(ctx, key, pod)
}

func message(ended *corev1.ContainerStateTerminated, fallback string) string {
	if ended != nil && ended.Message != "" {
		return ended.Message
	}
	return fallback
}

// CommandPod is the pod that runs an At's command, once.
func CommandPod(at *cnatv1alpha1.At) *corev1.Pod {
	spec := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name:                     "command",
			Image:                    Image,
			Command:                  []string{"sh", "-c", at.Spec.Command},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}},
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: at.Namespace, Name: at.Name, Labels: map[string]string{
			"app.kubernetes.io/name":       "at",
			"app.kubernetes.io/instance":   at.Name,
			"app.kubernetes.io/managed-by": managedBy,
		}},
		Spec: workload.Restricted(spec, 1001),
	}
}
