package flux

import (
	"context"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	"github.com/fluxcd/pkg/runtime/predicates"
	runtimereconcile "github.com/fluxcd/pkg/runtime/reconcile"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

var atReadyCondition = runtimereconcile.Conditions{
	Target:           meta.ReadyCondition,
	Owned:            []string{Succeeded, meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition},
	Summarize:        []string{meta.StalledCondition, meta.ReconcilingCondition, Succeeded},
	NegativePolarity: []string{meta.StalledCondition, meta.ReconcilingCondition},
}

// AtReconciler runs an At's command in the example's pod once its schedule is due, and
// reports its phase (PENDING, RUNNING, DONE), the pod and the command's exit code.
type AtReconciler struct {
	client.Client
	// ControllerName is the field owner of its patches.
	ControllerName string

	patchOptions []patch.Option
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time.
func (r *AtReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	r.patchOptions = patchOptions(atReadyCondition.Owned, r.ControllerName)
	return ctrl.NewControllerManagedBy(mgr).
		For(&cnatv1alpha1.At{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Owns(&corev1.Pod{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// Reconcile fetches the At, defers its final patch and reconciles it.
func (r *AtReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &cnatv1alpha1.At{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	serialPatcher := patch.NewSerialPatcher(obj, r.Client)
	defer patchAtTheEnd(ctx, serialPatcher, obj, r.patchOptions, atReadyCondition.Owned, r.ControllerName, &result, &retErr)

	if !obj.DeletionTimestamp.IsZero() || obj.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, serialPatcher, obj)
}

func (r *AtReconciler) reconcile(ctx context.Context, sp *patch.SerialPatcher, obj *cnatv1alpha1.At) (result ctrl.Result, retErr error) {
	defer func() {
		rs := runtimereconcile.NewResultFinalizer(isSuccess, "the command succeeded", atReadyCondition)
		retErr = rs.Finalize(obj, result, retErr)
	}()
	if obj.Status.Phase == cnatv1alpha1.PhaseDone {
		return ctrl.Result{RequeueAfter: Interval}, nil
	}
	if err := progress(ctx, sp, obj, obj.Generation, obj.Status.ObservedGeneration, r.patchOptions); err != nil {
		return ctrl.Result{}, err
	}
	if obj.Status.Phase == "" {
		obj.Status.Phase = cnatv1alpha1.PhasePending
	}
	if obj.Status.Phase == cnatv1alpha1.PhasePending {
		when, err := time.Parse(time.RFC3339, obj.Spec.Schedule)
		if err != nil {
			conditions.MarkStalled(obj, "InvalidSchedule", "%s", err)
			conditions.MarkFalse(obj, Succeeded, "InvalidSchedule", "%s", err)
			return ctrl.Result{}, nil
		}
		if wait := time.Until(when); wait > 0 {
			return ctrl.Result{RequeueAfter: min(wait, RetryInterval)}, nil
		}
		obj.Status.Phase = cnatv1alpha1.PhaseRunning
	}

	var pod *corev1.Pod
	if obj.Status.PodName == "" {
		created, _, err := child.Ensure(ctx, r.Client, obj, at.CommandPod(obj))
		if err != nil {
			conditions.MarkUnknown(obj, Succeeded, "PodNotCreated", "%s", err)
			return ctrl.Result{}, err
		}
		obj.Status.PodName, pod = created.Name, created
	} else {
		pod = &corev1.Pod{}
		err := r.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: obj.Status.PodName}, pod)
		switch {
		case apierrors.IsNotFound(err):
			conditions.MarkFalse(obj, Succeeded, "PodLost", "pod %s was deleted before the command ended", obj.Status.PodName)
			conditions.MarkStalled(obj, "PodLost", "pod %s was deleted before the command ended", obj.Status.PodName)
			obj.Status.Phase = cnatv1alpha1.PhaseDone
			return ctrl.Result{}, nil
		case err != nil:
			return ctrl.Result{}, err
		}
	}
	var ended *corev1.ContainerStateTerminated
	for _, cs := range pod.Status.ContainerStatuses {
		ended = cs.State.Terminated
	}
	if ended != nil {
		obj.Status.ExitCode = &ended.ExitCode
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		obj.Status.Phase = cnatv1alpha1.PhaseDone
		conditions.MarkTrue(obj, Succeeded, "CommandSucceeded", "the command succeeded")
		return ctrl.Result{RequeueAfter: Interval}, nil
	case corev1.PodFailed:
		// A command that failed is not retried: the At has stalled, as a Flux object
		// whose spec cannot succeed.
		obj.Status.Phase = cnatv1alpha1.PhaseDone
		conditions.MarkFalse(obj, Succeeded, "CommandFailed", "the command failed")
		conditions.MarkStalled(obj, "CommandFailed", "the command failed")
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: RetryInterval}, nil
}
