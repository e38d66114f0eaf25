package reconcile

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// SkipCleanupAnnotation, set to "true" on an object being deleted, lets its deletion go on
// without the cleanup of WithFinalizer: the way out for a person when the cleanup cannot
// succeed (what it cleans is gone, or was cleaned by hand). The shell records it as a
// Warning event, ReasonCleanupSkipped.
const SkipCleanupAnnotation = "reconcilekit.io/skip-cleanup"

// DefaultCleanupDeadline is how long a cleanup may go on after the deletion before the
// object is reported Stalled, unless WithCleanupDeadline says otherwise.
const DefaultCleanupDeadline = 10 * time.Minute

// Reasons of the finalizer's conditions and events.
const (
	// ReasonCleanupOverdue is Stalled's reason, and a Warning event's, when the cleanup has
	// not succeeded within its deadline. The cleanup goes on being retried.
	ReasonCleanupOverdue = "CleanupOverdue"
	// ReasonCleanupSkipped is the Warning event of a deletion that went on without cleanup
	// because of SkipCleanupAnnotation.
	ReasonCleanupSkipped = "CleanupSkipped"
	// ReasonCleanupAbandoned is the Warning event of a deletion that went on without cleanup
	// because the cleanup was refused for its namespace being deleted: what it would create
	// there cannot be created, however long it waits.
	ReasonCleanupAbandoned = "CleanupAbandoned"
)

// WithCleanupDeadline sets how long after an object's deletion its cleanup (WithFinalizer)
// may go on before the shell reports it: Stalled with ReasonCleanupOverdue, once, with a
// Warning event naming SkipCleanupAnnotation. The deadline counts from the object's
// deletionTimestamp, so a restart does not reset it. DefaultCleanupDeadline otherwise.
func WithCleanupDeadline(d time.Duration) Option {
	return func(o *options) { o.cleanupDeadline = d }
}

// cleanupDeleted runs the cleanup of obj, being deleted, and removes the finalizer once it
// is done, or once a person or the namespace's deletion says it never will be.
func (r *shell[T]) cleanupDeleted(ctx context.Context, obj T, s Scope) requeue.Outcome {
	if !controllerutil.ContainsFinalizer(obj, r.options.finalizer) {
		return requeue.Done()
	}
	if obj.GetAnnotations()[SkipCleanupAnnotation] == "true" {
		return r.release(ctx, obj, ReasonCleanupSkipped, "deletion goes on without cleanup: annotation "+SkipCleanupAnnotation+" is \"true\"")
	}
	outcome := r.cleanup.Reconcile(ctx, obj, s)
	if outcome.IsDone() {
		return r.release(ctx, obj, "", "")
	}
	if err := outcome.Err(); err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return r.release(ctx, obj, ReasonCleanupAbandoned, "deletion goes on without cleanup: its namespace is being deleted, so what the cleanup creates cannot be: "+err.Error())
	}
	if late := s.Now.Sub(obj.GetDeletionTimestamp().Time); late > r.options.cleanupDeadline {
		if err := r.overdue(ctx, obj, s.Now, outcome); err != nil {
			return requeue.Merge(outcome, requeue.Retry(err))
		}
	}
	return outcome
}

// release removes the finalizer from obj so that its deletion completes, recording a
// Warning event with reason when one is given.
func (r *shell[T]) release(ctx context.Context, obj T, reason, note string) requeue.Outcome {
	if err := r.patch(ctx, obj, func() { controllerutil.RemoveFinalizer(obj, r.options.finalizer) }); err != nil && !apierrors.IsNotFound(err) {
		return requeue.Retry(err)
	}
	if reason != "" {
		r.event(obj, corev1.EventTypeWarning, reason, note)
	}
	return requeue.Done()
}

// overdue reports, once, that obj's cleanup has not succeeded within its deadline: Stalled
// and Ready False with ReasonCleanupOverdue, and a Warning event. The cleanup's outcome
// says why; later outcomes do not rewrite it, so a cleanup retried for hours costs no
// status write after the first.
func (r *shell[T]) overdue(ctx context.Context, obj T, now time.Time, outcome requeue.Outcome) error {
	why := "it is still waiting: " + outcome.String()
	if err := outcome.Err(); err != nil {
		why = err.Error()
	}
	msg := fmt.Sprintf("cleanup has not succeeded within %s of the deletion (%s): fix its cause, or annotate %s=true to delete without cleanup",
		r.options.cleanupDeadline, why, SkipCleanupAnnotation)
	conds, ok := any(obj).(conditions.Setter)
	if !ok {
		r.event(obj, corev1.EventTypeWarning, ReasonCleanupOverdue, msg)
		return nil
	}
	if c := conditions.Find(conds, conditions.Stalled); c != nil && c.Reason == ReasonCleanupOverdue {
		return nil
	}
	before := obj.DeepCopyObject().(T)
	for _, typ := range []string{conditions.Stalled, conditions.Ready} {
		status := metav1.ConditionTrue
		if typ == conditions.Ready {
			status = metav1.ConditionFalse
		}
		conditions.Set(conds, metav1.Condition{Type: typ, Status: status, Reason: ReasonCleanupOverdue, Message: msg})
	}
	conditions.Remove(conds, conditions.Reconciling)
	stamp(conds, any(before).(conditions.Setter), now)
	if err := r.write(ctx, before, obj); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	r.event(obj, corev1.EventTypeWarning, ReasonCleanupOverdue, msg)
	return nil
}
