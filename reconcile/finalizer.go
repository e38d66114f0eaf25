package reconcile

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// cleanupOptions are the options of the finalizer protocol.
type cleanupOptions struct {
	finalizer       string        // WithFinalizer; "": none
	cleanupDeadline time.Duration // WithCleanupDeadline
}

// WithCleanupDeadline sets how long after an object's deletion its cleanup (WithFinalizer)
// may go on before the shell reports it: Stalled with ReasonCleanupOverdue, once, with a
// Warning event naming SkipCleanupAnnotation. The deadline counts from the object's
// deletionTimestamp, so a restart does not reset it. DefaultCleanupDeadline otherwise.
func WithCleanupDeadline(d time.Duration) Option {
	return func(o *options) { o.cleanup.cleanupDeadline = d }
}

// ReasonCleaningUp is Reconciling's reason while an object is being deleted and its
// cleanup (WithFinalizer) asks to run again without an error: the deletion waits for it.
const ReasonCleaningUp = "CleaningUp"

// cleanupDeleted runs the cleanup of obj, being deleted, and removes the finalizer once it
// is done, or once a person or the namespace's deletion says it never will be.
//
// While the cleanup is not done the shell writes what it says, as it does for a reconcile,
// once a change: the conditions the cleanup set, and the standard ones from its outcome
// (Reconciling with ReasonCleaningUp while it waits, ReasonRetrying on an error; Stalled
// with the cleanup's own reason when it marks Stalled True or a condition of negative
// polarity, ReasonTerminalError on a terminal outcome). Past the deadline (WithCleanupDeadline)
// Stalled is ReasonCleanupOverdue, set once: later outcomes do not rewrite it. kstatus
// reports any object with a deletionTimestamp as Terminating; these conditions are what
// `kubectl describe` and `kubectl get -o yaml` show of why the deletion waits.
func (r *shell[T]) cleanupDeleted(ctx context.Context, obj T, s Scope, this *attempt) requeue.Outcome {
	if !controllerutil.ContainsFinalizer(obj, r.options.cleanup.finalizer) {
		return requeue.Done()
	}
	if obj.GetAnnotations()[SkipCleanupAnnotation] == "true" {
		return r.release(ctx, obj, ReasonCleanupSkipped, "deletion goes on without cleanup: annotation "+SkipCleanupAnnotation+" is \"true\"")
	}
	before := obj.DeepCopyObject().(T)
	conds, hasConditions := any(obj).(conditions.Setter)
	if hasConditions {
		strip(conds) // the cleanup starts from its own conditions, as the logic does
	}
	outcome := r.cleanup.Reconcile(ctx, obj, s)
	if err := outcome.Err(); err != nil && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return r.release(ctx, obj, ReasonCleanupAbandoned, "deletion goes on without cleanup: its namespace is being deleted, so what the cleanup creates cannot be: "+err.Error())
	}
	overdue := s.Now.Sub(obj.GetDeletionTimestamp().Time) > r.options.cleanup.cleanupDeadline && !outcome.IsDone()
	if outcome.IsDone() && len(obj.GetFinalizers()) == 1 {
		// The object goes with the finalizer: a status written now would never be read.
		return r.release(ctx, obj, "", "")
	}
	quiet := isQuiet(outcome.Err())
	if !quiet && !outcome.IsTerminal() {
		if this.held = r.failures.held(client.ObjectKeyFromObject(obj), outcome.Err(), r.options.retry.reportAfter); this.held {
			return outcome // nothing written: the retry will do better, or say so (WithReportAfter)
		}
	}
	var news []shellEvent
	if hasConditions {
		old := any(before).(conditions.Setter)
		logicSet := strip(conds)
		switch {
		case quiet: // a conflict: the cleanup learnt nothing new to say
			restore(conds, old)
		case overdue:
			logicSet = r.overdue(old, outcome)
		case logicSet.stalled == nil && logicSet.reconciling == nil && !outcome.IsDone() && outcome.Err() == nil:
			logicSet.reconciling = &metav1.Condition{Reason: ReasonCleaningUp,
				Message: fmt.Sprintf("the object is being deleted: its cleanup (finalizer %s) is not done yet", r.options.cleanup.finalizer)}
		}
		if !quiet {
			markStandard(conds, logicSet, outcome)
		}
		stamp(conds, old, s.Now)
		news = transitions(conds, old, false)
	} else if overdue {
		r.event(obj, corev1.EventTypeWarning, ReasonCleanupOverdue, r.overdueMessage(outcome))
	}
	if outcome.Err() == nil || outcome.IsTerminal() {
		if og, ok := any(obj).(ObservedGenerationSetter); ok {
			og.SetObservedGeneration(obj.GetGeneration())
		}
	}
	if !equality.Semantic.DeepEqual(before, obj) {
		// Before the finalizer goes: once it has, the object may be gone.
		err := r.write(ctx, before, obj)
		switch {
		case apierrors.IsNotFound(err):
			return requeue.Done()
		case err != nil && outcome.Err() != nil:
			return outcome // the cleanup's error says more; its retry writes the status again
		case err != nil:
			return requeue.Retry(err) // a conflict is a quiet requeue
		}
	}
	for _, e := range news {
		r.event(obj, e.kind, e.reason, e.note)
	}
	if outcome.IsDone() {
		// The status write, if any, changed the resourceVersion the finalizer's patch is
		// guarded by: its conflict is a quiet requeue, which finds nothing more to write.
		return r.release(ctx, obj, "", "")
	}
	return outcome
}

// release removes the finalizer from obj so that its deletion completes, recording a
// Warning event with reason when one is given. An object gone already is released.
func (r *shell[T]) release(ctx context.Context, obj T, reason, note string) requeue.Outcome {
	if err := r.patch(ctx, obj, func() { controllerutil.RemoveFinalizer(obj, r.options.cleanup.finalizer) }); err != nil && !apierrors.IsNotFound(err) {
		return requeue.Retry(err)
	}
	if reason != "" {
		r.event(obj, corev1.EventTypeWarning, reason, note)
	}
	return requeue.Done()
}

// overdue returns the standard conditions of a cleanup past its deadline: Stalled with
// ReasonCleanupOverdue, which replaces the cleanup's own Stalled once. The outcome of the
// first reconcile past the deadline says why; later outcomes do not rewrite it, so a
// cleanup retried for hours costs no status write after the first.
func (r *shell[T]) overdue(before conditions.Getter, outcome requeue.Outcome) standard {
	if c := conditions.Find(before, conditions.Stalled); c != nil && c.Status == metav1.ConditionTrue && c.Reason == ReasonCleanupOverdue {
		return standard{stalled: c}
	}
	return standard{stalled: &metav1.Condition{Reason: ReasonCleanupOverdue, Message: r.overdueMessage(outcome)}}
}

// overdueMessage says that the cleanup is past its deadline, why, and how a person ends it.
func (r *shell[T]) overdueMessage(outcome requeue.Outcome) string {
	why := "it is still waiting: " + outcome.String()
	if err := outcome.Err(); err != nil {
		why = err.Error()
	}
	return fmt.Sprintf("cleanup has not succeeded within %s of the deletion (%s): fix its cause, or annotate %s=true to delete without cleanup",
		r.options.cleanup.cleanupDeadline, why, SkipCleanupAnnotation)
}
