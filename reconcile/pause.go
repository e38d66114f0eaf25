package reconcile

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// PausedAnnotation pauses an object: while it is "true" the shell runs no logic for the
// object, so nothing is written to its children, and reports the pause in the Paused
// condition. Deletion goes on (cleanup runs), so a paused object never blocks its
// namespace's deletion. Removing the annotation resumes at once.
const PausedAnnotation = "reconcilekit.io/paused"

// Paused is the condition of a paused object: True while PausedAnnotation is "true" or the
// object's spec suspends it (WithSuspend), absent otherwise. Ready, Reconciling and Stalled
// keep what they said before the pause.
const Paused = "Paused"

// Reasons of Paused: what paused the object.
const (
	// ReasonPausedByAnnotation: PausedAnnotation is "true".
	ReasonPausedByAnnotation = "PausedByAnnotation"
	// ReasonSuspended: the object's spec suspends it (WithSuspend).
	ReasonSuspended = "Suspended"
)

// pausedBy returns why obj is paused (a reason of Paused) and how to resume, or "" when
// it is not paused.
func (r *shell[T]) pausedBy(obj T) (reason, resume string) {
	switch {
	case obj.GetAnnotations()[PausedAnnotation] == "true":
		return ReasonPausedByAnnotation, "annotation " + PausedAnnotation + " is \"true\"; remove it to resume"
	case r.suspended != nil && r.suspended(obj):
		return ReasonSuspended, "its spec suspends reconciling; unsuspend it to resume"
	}
	return "", ""
}

// pause records that obj is paused for reason, once, and does nothing else: the logic does
// not run, so nothing is written to its children, and an object already marked paused for
// that reason is not written at all, whatever was edited since (its Paused condition keeps
// the generation it was paused at), nor is the event recorded again.
func (r *shell[T]) pause(ctx context.Context, obj T, now time.Time, reason, resume string) requeue.Outcome {
	conds, ok := any(obj).(conditions.Setter)
	if !ok {
		return requeue.Done()
	}
	if c := conditions.Find(conds, Paused); c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason {
		return requeue.Done()
	}
	before := obj.DeepCopyObject().(T)
	conditions.Set(conds, metav1.Condition{Type: Paused, Status: metav1.ConditionTrue, Reason: reason, Message: resume})
	stamp(conds, any(before).(conditions.Setter), now)
	if err := r.write(ctx, before, obj); err != nil && !apierrors.IsNotFound(err) {
		return requeue.Retry(err)
	}
	r.event(obj, corev1.EventTypeNormal, reason, "reconciling is paused: "+resume)
	return requeue.Done()
}
