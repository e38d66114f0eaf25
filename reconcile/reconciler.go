package reconcile

import (
	"context"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/reconcilekit/reconcilekit/requeue"
)

// conflictDelay is how long a quiet requeue waits: about as long as the cache takes to see
// the write that won.
const conflictDelay = 200 * time.Millisecond

// Logic is an operator's own reconcile logic for objects of type T. It brings the world in
// line with obj's spec, records what it saw in obj's status (the shell writes it), and says
// when to run again.
type Logic[T client.Object] interface {
	Reconcile(ctx context.Context, obj T) requeue.Outcome
}

// LogicFunc adapts a function to Logic.
type LogicFunc[T client.Object] func(ctx context.Context, obj T) requeue.Outcome

// Reconcile calls f.
func (f LogicFunc[T]) Reconcile(ctx context.Context, obj T) requeue.Outcome { return f(ctx, obj) }

// ObservedGenerationSetter is implemented by objects whose status has an observedGeneration.
// The shell sets it to the object's generation once the logic has handled that generation
// without an error, so readiness tools never take an old status for a new spec.
type ObservedGenerationSetter interface {
	SetObservedGeneration(int64)
}

// Reconciler is a controller-runtime reconcile.Reconciler for objects of type T, which must
// be a pointer to a struct (for example *v1alpha1.Memcached). Build it with New.
type Reconciler[T client.Object] struct {
	client    client.Client
	logic     Logic[T]
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	finalizer string
	finalize  Logic[T]
	newObject func() T
}

// Option configures a Reconciler.
type Option[T client.Object] func(*Reconciler[T])

// WithRecorder makes the shell record an event when the logic fails. The manager's
// GetEventRecorder gives one.
func WithRecorder[T client.Object](r events.EventRecorder) Option[T] {
	return func(rec *Reconciler[T]) { rec.recorder = r }
}

// WithClock sets the clock that turns requeue.At outcomes into delays; tests pass a fake one.
func WithClock[T client.Object](c clock.PassiveClock) Option[T] {
	return func(rec *Reconciler[T]) { rec.clock = c }
}

// WithFinalizer makes the shell add finalizer to every object before the logic first runs,
// and, once the object is being deleted, run cleanup until it returns a done outcome, then
// remove the finalizer so the deletion completes. The logic is not run for an object being
// deleted.
func WithFinalizer[T client.Object](finalizer string, cleanup Logic[T]) Option[T] {
	return func(rec *Reconciler[T]) { rec.finalizer, rec.finalize = finalizer, cleanup }
}

// New returns a Reconciler that runs logic for objects of type T, reading and writing them
// through c (normally the manager's client).
func New[T client.Object](c client.Client, logic Logic[T], opts ...Option[T]) *Reconciler[T] {
	r := &Reconciler[T]{client: c, logic: logic, clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(r)
	}
	elem := reflect.TypeFor[T]().Elem()
	r.newObject = func() T { return reflect.New(elem).Interface().(T) }
	return r
}

// Reconcile implements controller-runtime's reconcile.Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return r.finish(ctx, obj, r.run(ctx, obj))
}

func (r *Reconciler[T]) run(ctx context.Context, obj T) requeue.Outcome {
	if r.finalizer != "" {
		if !obj.GetDeletionTimestamp().IsZero() {
			return r.cleanup(ctx, obj)
		}
		if !controllerutil.ContainsFinalizer(obj, r.finalizer) {
			if err := r.patch(ctx, obj, func() { controllerutil.AddFinalizer(obj, r.finalizer) }); err != nil {
				return requeue.Retry(err)
			}
		}
	} else if !obj.GetDeletionTimestamp().IsZero() {
		return requeue.Done()
	}

	before := obj.DeepCopyObject().(T)
	outcome := r.logic.Reconcile(ctx, obj)
	if s, ok := any(obj).(ObservedGenerationSetter); ok && outcome.Err() == nil {
		s.SetObservedGeneration(obj.GetGeneration())
	}
	if equality.Semantic.DeepEqual(before, obj) {
		return outcome
	}
	err := r.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	switch {
	case apierrors.IsNotFound(err):
		return requeue.Done()
	case err != nil && outcome.Err() != nil:
		return outcome // the logic's error says more; its retry writes the status again
	case err != nil:
		return requeue.Retry(err)
	}
	log.FromContext(ctx).V(1).Info("status written")
	return outcome
}

func (r *Reconciler[T]) cleanup(ctx context.Context, obj T) requeue.Outcome {
	if !controllerutil.ContainsFinalizer(obj, r.finalizer) {
		return requeue.Done()
	}
	outcome := r.finalize.Reconcile(ctx, obj)
	if !outcome.IsDone() {
		return outcome
	}
	if err := r.patch(ctx, obj, func() { controllerutil.RemoveFinalizer(obj, r.finalizer) }); err != nil && !apierrors.IsNotFound(err) {
		return requeue.Retry(err)
	}
	return requeue.Done()
}

// patch changes obj's metadata with a merge patch guarded by its resourceVersion.
func (r *Reconciler[T]) patch(ctx context.Context, obj T, change func()) error {
	before := obj.DeepCopyObject().(T)
	change()
	return r.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// finish turns the outcome into controller-runtime's result. Conflicts and stale-cache
// answers are quiet requeues: the write that won will trigger another reconcile anyway.
func (r *Reconciler[T]) finish(ctx context.Context, obj T, outcome requeue.Outcome) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	if err := outcome.Err(); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			logger.V(1).Info("requeued after a conflict", "reason", err.Error())
			return ctrl.Result{RequeueAfter: conflictDelay}, nil
		}
		if r.recorder != nil {
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "ReconcileError", "Reconcile", "%s", err.Error())
		}
	}
	result, err := outcome.Result(r.clock.Now())
	if err == nil && outcome.Err() != nil {
		// The outcome keeps a delay, so the error is not returned; log it here instead.
		logger.Error(outcome.Err(), "reconcile failed", "retryAfter", result.RequeueAfter)
	}
	return result, err
}
