package flux

import (
	"context"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	"github.com/fluxcd/pkg/runtime/predicates"
	runtimereconcile "github.com/fluxcd/pkg/runtime/reconcile"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

// memcachedReadyCondition is what the Memcached reconciler owns and how its Ready
// condition summarizes them, as source-controller's gitRepositoryReadyCondition.
var memcachedReadyCondition = runtimereconcile.Conditions{
	Target:           meta.ReadyCondition,
	Owned:            []string{Available, Progressing, Degraded, meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition},
	Summarize:        []string{meta.StalledCondition, meta.ReconcilingCondition, Available},
	NegativePolarity: []string{meta.StalledCondition, meta.ReconcilingCondition},
}

// MemcachedReconciler runs a Memcached as a Deployment and a Service, the children the
// example creates, and reports the Deployment's availability.
type MemcachedReconciler struct {
	client.Client
	// ControllerName is the field owner of its patches.
	ControllerName string

	patchOptions []patch.Option
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time.
func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	r.patchOptions = patchOptions(memcachedReadyCondition.Owned, r.ControllerName)
	return ctrl.NewControllerManagedBy(mgr).
		For(&cachev1beta1.Memcached{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// Reconcile is image-automation-controller's Reconcile: fetch, serial patcher, deferred
// final patch.
func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &cachev1beta1.Memcached{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	serialPatcher := patch.NewSerialPatcher(obj, r.Client)
	defer patchAtTheEnd(ctx, serialPatcher, obj, r.patchOptions, memcachedReadyCondition.Owned, r.ControllerName, &result, &retErr)

	if !obj.DeletionTimestamp.IsZero() || obj.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, serialPatcher, obj)
}

func (r *MemcachedReconciler) reconcile(ctx context.Context, sp *patch.SerialPatcher, obj *cachev1beta1.Memcached) (result ctrl.Result, retErr error) {
	defer func() {
		rs := runtimereconcile.NewResultFinalizer(isSuccess, "Deployment available", memcachedReadyCondition)
		retErr = rs.Finalize(obj, result, retErr)
	}()
	if err := progress(ctx, sp, obj, obj.Generation, obj.Status.ObservedGeneration, r.patchOptions); err != nil {
		return ctrl.Result{}, err
	}
	if obj.Spec.Server.ConfigMapRef != nil {
		// The benchmark's Memcacheds name no ConfigMap; the example's arguments from one
		// are not what is compared.
		conditions.MarkStalled(obj, "ConfigMapUnsupported", "this operator does not read spec.server.configMapRef")
		return ctrl.Result{}, nil
	}
	dep, _, err := child.Ensure(ctx, r.Client, obj, memcached.Deployment(obj))
	if err != nil {
		conditions.MarkFalse(obj, Available, "DeploymentFailed", "%s", err)
		return ctrl.Result{}, err
	}
	if _, _, err := child.Ensure(ctx, r.Client, obj, memcached.Service(obj)); err != nil {
		conditions.MarkFalse(obj, Available, "ServiceFailed", "%s", err)
		return ctrl.Result{}, err
	}
	obj.Status.Replicas, obj.Status.ReadyReplicas, obj.Status.Selector = dep.Status.Replicas, dep.Status.ReadyReplicas, child.Selector(dep)
	if !rollout(obj, dep) {
		return ctrl.Result{RequeueAfter: RetryInterval}, nil
	}
	return ctrl.Result{RequeueAfter: Interval}, nil
}
