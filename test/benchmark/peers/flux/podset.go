package flux

import (
	"context"
	"slices"

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
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

// InstanceLabel names, on a PodSet's pods, the PodSet.
const InstanceLabel = "app.kubernetes.io/instance"

var podSetReadyCondition = runtimereconcile.Conditions{
	Target:           meta.ReadyCondition,
	Owned:            []string{Available, Progressing, Degraded, meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition},
	Summarize:        []string{meta.StalledCondition, meta.ReconcilingCondition, Available},
	NegativePolarity: []string{meta.StalledCondition, meta.ReconcilingCondition},
}

// PodSetReconciler runs a PodSet as the example's Deployment and reports its pods'
// names and the Deployment's availability.
type PodSetReconciler struct {
	client.Client
	// ControllerName is the field owner of its patches.
	ControllerName string

	patchOptions []patch.Option
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time. A pod brings back the PodSet its instance label names.
func (r *PodSetReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	r.patchOptions = patchOptions(podSetReadyCondition.Owned, r.ControllerName)
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1alpha1.PodSet{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Owns(&appsv1.Deployment{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podSetOfPod)).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// podSetOfPod is the PodSet a pod's instance label names.
func podSetOfPod(_ context.Context, pod client.Object) []ctrl.Request {
	name := pod.GetLabels()[InstanceLabel]
	if name == "" {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}}}
}

// Reconcile fetches the PodSet, defers its final patch and reconciles it.
func (r *PodSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &appsv1alpha1.PodSet{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	serialPatcher := patch.NewSerialPatcher(obj, r.Client)
	defer patchAtTheEnd(ctx, serialPatcher, obj, r.patchOptions, podSetReadyCondition.Owned, r.ControllerName, &result, &retErr)

	if !obj.DeletionTimestamp.IsZero() || obj.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, serialPatcher, obj)
}

func (r *PodSetReconciler) reconcile(ctx context.Context, sp *patch.SerialPatcher, obj *appsv1alpha1.PodSet) (result ctrl.Result, retErr error) {
	defer func() {
		rs := runtimereconcile.NewResultFinalizer(isSuccess, "Deployment available", podSetReadyCondition)
		retErr = rs.Finalize(obj, result, retErr)
	}()
	if err := progress(ctx, sp, obj, obj.Generation, obj.Status.ObservedGeneration, r.patchOptions); err != nil {
		return ctrl.Result{}, err
	}
	dep, _, err := child.Ensure(ctx, r.Client, obj, podset.Deployment(obj))
	if err != nil {
		conditions.MarkFalse(obj, Available, "DeploymentFailed", "%s", err)
		return ctrl.Result{}, err
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(obj.Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		return ctrl.Result{}, err
	}
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	obj.Status.PodNames = names
	obj.Status.Replicas, obj.Status.ReadyReplicas, obj.Status.Selector = dep.Status.Replicas, dep.Status.ReadyReplicas, child.Selector(dep)
	if !rollout(obj, dep) {
		return ctrl.Result{RequeueAfter: RetryInterval}, nil
	}
	return ctrl.Result{RequeueAfter: Interval}, nil
}
