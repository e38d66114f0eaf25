package flux

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	"github.com/fluxcd/pkg/runtime/predicates"
	runtimereconcile "github.com/fluxcd/pkg/runtime/reconcile"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

var keyvalReadyCondition = runtimereconcile.Conditions{
	Target:           meta.ReadyCondition,
	Owned:            []string{Available, Progressing, Degraded, meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition},
	Summarize:        []string{meta.StalledCondition, meta.ReconcilingCondition, Available},
	NegativePolarity: []string{meta.StalledCondition, meta.ReconcilingCondition},
}

// KeyvalReconciler runs a Keyval as the example's ConfigMap, PodDisruptionBudget, two
// Services and StatefulSet, reports the StatefulSet's readiness and scale, and holds a
// deleted Keyval with the example's finalizer until its volumes are deleted, when its
// spec.storage.whenDeleted says so.
type KeyvalReconciler struct {
	client.Client
	// APIReader reads what the cache does not hold: the volume claims a deleted Keyval's
	// cleanup deletes.
	APIReader client.Reader
	// ControllerName is the field owner of its patches.
	ControllerName string

	patchOptions []patch.Option
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time.
func (r *KeyvalReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	r.patchOptions = patchOptions(keyvalReadyCondition.Owned, r.ControllerName)
	return ctrl.NewControllerManagedBy(mgr).
		For(&storev1alpha1.Keyval{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// Reconcile is image-automation-controller's Reconcile: fetch, serial patcher, deferred
// final patch; a deleted object's cleanup, and the finalizer added first, before the
// object is acted on.
func (r *KeyvalReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &storev1alpha1.Keyval{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	serialPatcher := patch.NewSerialPatcher(obj, r.Client)
	defer patchAtTheEnd(ctx, serialPatcher, obj, r.patchOptions, keyvalReadyCondition.Owned, r.ControllerName, &result, &retErr)

	if !obj.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, obj)
	}
	// Add finalizer first if it doesn't exist to avoid the race condition between init
	// and delete, as Flux's controllers do: the final patch writes it.
	if !controllerutil.ContainsFinalizer(obj, keyval.Finalizer) {
		controllerutil.AddFinalizer(obj, keyval.Finalizer)
		//lint:ignore SA1019 Flux's controllers requeue this way once they add their finalizer, and the peer keeps their behaviour.
		return ctrl.Result{Requeue: true}, nil
	}
	if obj.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, serialPatcher, obj)
}

func (r *KeyvalReconciler) reconcile(ctx context.Context, sp *patch.SerialPatcher, obj *storev1alpha1.Keyval) (result ctrl.Result, retErr error) {
	defer func() {
		rs := runtimereconcile.NewResultFinalizer(isSuccess, "StatefulSet rolled out", keyvalReadyCondition)
		retErr = rs.Finalize(obj, result, retErr)
	}()
	if err := progress(ctx, sp, obj, obj.Generation, obj.Status.ObservedGeneration, r.patchOptions); err != nil {
		return ctrl.Result{}, err
	}
	// A spec the schema refuses cannot succeed on a retry: stalled until it changes.
	if err := keyval.Invalid(obj); err != nil {
		conditions.MarkStalled(obj, keyval.ReasonInvalidSpec, "%s", err)
		return ctrl.Result{}, nil
	}
	config := keyval.ConfigMap(obj)
	if _, _, err := child.Ensure(ctx, r.Client, obj, config); err != nil {
		conditions.MarkFalse(obj, Available, "ConfigMapFailed", "%s", err)
		return ctrl.Result{}, err
	}
	pdb, _, err := child.Ensure(ctx, r.Client, obj, keyval.PodDisruptionBudget(obj))
	if err != nil {
		conditions.MarkFalse(obj, Available, "PodDisruptionBudgetFailed", "%s", err)
		return ctrl.Result{}, err
	}
	for _, svc := range []*corev1.Service{keyval.HeadlessService(obj), keyval.Service(obj)} {
		if _, _, err := child.Ensure(ctx, r.Client, obj, svc); err != nil {
			conditions.MarkFalse(obj, Available, "ServiceFailed", "%s", err)
			return ctrl.Result{}, err
		}
	}
	desired, err := keyval.StatefulSet(obj, config)
	if err != nil {
		return ctrl.Result{}, err
	}
	sts, _, err := child.Ensure(ctx, r.Client, obj, desired)
	if err != nil {
		conditions.MarkFalse(obj, Available, "StatefulSetFailed", "%s", err)
		return ctrl.Result{}, err
	}
	obj.Status.Replicas, obj.Status.ReadyReplicas, obj.Status.Selector = sts.Status.Replicas, sts.Status.ReadyReplicas, child.StatefulSetSelector(sts)
	if !statefulSetRollout(obj, sts, pdb) {
		return ctrl.Result{RequeueAfter: RetryInterval}, nil
	}
	return ctrl.Result{RequeueAfter: Interval}, nil
}

// reconcileDelete is the cleanup of a deleted Keyval: with spec.storage.whenDeleted
// Delete, its StatefulSet and then its volume claims, looked at again until they are
// gone; then the finalizer goes, which the final patch writes.
func (r *KeyvalReconciler) reconcileDelete(ctx context.Context, obj *storev1alpha1.Keyval) (ctrl.Result, error) {
	if obj.Spec.Storage.WhenDeleted == storev1alpha1.Delete {
		desired, err := keyval.StatefulSet(obj, keyval.ConfigMap(obj))
		if err != nil {
			return ctrl.Result{}, err
		}
		left, err := child.DeleteWithClaims(ctx, r.Client, r.APIReader, obj, desired)
		if err != nil {
			return ctrl.Result{}, err
		}
		if left > 0 {
			return ctrl.Result{RequeueAfter: child.ClaimsRecheck}, nil
		}
	}
	controllerutil.RemoveFinalizer(obj, keyval.Finalizer)
	return ctrl.Result{}, nil
}

// statefulSetRollout marks obj Available, Progressing and Degraded from its StatefulSet
// sts, protected by pdb, as the example does: Available while the budget's minimum of
// servers are ready, Progressing until the rollout is complete; and reports whether it is.
func statefulSetRollout(obj conditions.Setter, sts *appsv1.StatefulSet, pdb *policyv1.PodDisruptionBudget) bool {
	serving, counts := child.StatefulSetServing(sts, pdb)
	if serving {
		conditions.MarkTrue(obj, Available, "MinimumReplicasAvailable", "minimum availability: %s", counts)
	} else {
		conditions.MarkFalse(obj, Available, "MinimumReplicasUnavailable", "below minimum availability: %s", counts)
	}
	message := fmt.Sprintf("%d of %d replicas ready", sts.Status.ReadyReplicas, child.StatefulSetReplicas(sts))
	done := child.StatefulSetRolledOut(sts)
	if done {
		conditions.MarkFalse(obj, Progressing, "RolloutComplete", "%s", message)
		conditions.MarkFalse(obj, Degraded, "RolloutComplete", "%s", message)
	} else {
		conditions.MarkTrue(obj, Progressing, "RollingOut", "%s", message)
		conditions.MarkFalse(obj, Degraded, "RollingOut", "%s", message)
	}
	return done
}
