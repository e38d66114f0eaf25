package capi

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

// InstanceLabel names, on a PodSet's pods, the PodSet.
const InstanceLabel = "app.kubernetes.io/instance"

// PodSetReconciler runs a PodSet as the example's Deployment and reports its pods'
// names and the Deployment's availability.
type PodSetReconciler struct {
	Client client.Client

	controller capicontrollerutil.Controller
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time. A pod brings back the PodSet its instance label names, as a Machine brings
// back its MachineSet through a map function.
func (r *PodSetReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	predicateLog := ctrl.LoggerFrom(ctx).WithValues("controller", "podset")
	c, err := capicontrollerutil.NewControllerManagedBy(mgr, predicateLog).
		For(&appsv1alpha1.PodSet{}).
		Owns(&appsv1.Deployment{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podSetOfPod)).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		WithEventFilter(predicates.ResourceNotPausedAndHasFilterLabel(mgr.GetScheme(), predicateLog, "")).
		Build(ctx, r)
	if err != nil {
		return fmt.Errorf("failed setting up with a controller manager: %w", err)
	}
	r.controller = c
	return nil
}

func podSetOfPod(_ context.Context, pod client.Object) []ctrl.Request {
	name := pod.GetLabels()[InstanceLabel]
	if name == "" {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}}}
}

// Reconcile fetches the PodSet, makes its patch helper, defers the patch and reconciles.
func (r *PodSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	ps := &appsv1alpha1.PodSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ps); err != nil {
		if apierrors.IsNotFound(err) {
			r.controller.ClearConsistencyStore(req.NamespacedName, "")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	patchHelper, err := patch.NewHelper(ps, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		patchOpts := []patch.Option{}
		if reterr == nil {
			patchOpts = append(patchOpts, patch.WithStatusObservedGeneration{})
		}
		if err := patchObject(ctx, patchHelper, ps, Available, patchOpts...); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	if !ps.DeletionTimestamp.IsZero() || ps.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.reconcile(ctx, ps)
}

func (r *PodSetReconciler) reconcile(ctx context.Context, ps *appsv1alpha1.PodSet) error {
	dep, created, err := child.Ensure(ctx, r.Client, ps, podset.Deployment(ps))
	if err != nil {
		mark(ps, Available, metav1.ConditionUnknown, "DeploymentFailed", err.Error())
		progressing(ps, false, "DeploymentFailed", err.Error())
		return err
	}
	if created {
		r.controller.DeferNextReconcileUntilCacheUpToDate(ps, capicontrollerutil.StructuredObject(appsv1.SchemeGroupVersion, "Deployment"), dep.ResourceVersion)
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(ps.Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		return err
	}
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	ps.Status.PodNames = names
	ps.Status.Replicas, ps.Status.ReadyReplicas, ps.Status.Selector = dep.Status.Replicas, dep.Status.ReadyReplicas, child.Selector(dep)
	deploymentStatus(ps, dep)
	return nil
}
