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

// Paused is the condition of a paused object: True while PausedAnnotation is "true", absent
// otherwise. Ready, Reconciling and Stalled keep what they said before the pause.
const Paused = "Paused"

// ReasonPausedByAnnotation is the reason of Paused.
const ReasonPausedByAnnotation = "PausedByAnnotation"

// pause records that obj is paused, once, and does nothing else: the logic does not run, so
// nothing is written to its children, and an object already marked paused is not written
// at all, whatever was edited since (its Paused condition keeps the generation it was
// paused at), nor is the event recorded again.
func (r *shell[T]) pause(ctx context.Context, obj T, now time.Time) requeue.Outcome {
	conds, ok := any(obj).(conditions.Setter)
	if !ok || conditions.IsTrue(conds, Paused) {
		return requeue.Done()
	}
	before := obj.DeepCopyObject().(T)
	conditions.Set(conds, metav1.Condition{Type: Paused, Status: metav1.ConditionTrue, Reason: ReasonPausedByAnnotation,
		Message: "annotation " + PausedAnnotation + " is \"true\"; remove it to resume"})
	stamp(conds, any(before).(conditions.Setter), now)
	if err := r.write(ctx, before, obj); err != nil && !apierrors.IsNotFound(err) {
		return requeue.Retry(err)
	}
	r.event(obj, corev1.EventTypeNormal, ReasonPausedByAnnotation, "reconciling is paused")
	return requeue.Done()
}
