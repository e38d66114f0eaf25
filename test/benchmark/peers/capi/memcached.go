package capi

import (
	"context"
	"fmt"

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

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

// MemcachedReconciler runs a Memcached as a Deployment and a Service, the children the
// example creates, and reports the Deployment's availability.
type MemcachedReconciler struct {
	Client client.Client

	controller capicontrollerutil.Controller
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time.
func (r *MemcachedReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	predicateLog := ctrl.LoggerFrom(ctx).WithValues("controller", "memcached")
	c, err := capicontrollerutil.NewControllerManagedBy(mgr, predicateLog).
		For(&cachev1beta1.Memcached{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		WithEventFilter(predicates.ResourceNotPausedAndHasFilterLabel(mgr.GetScheme(), predicateLog, "")).
		Build(ctx, r)
	if err != nil {
		return fmt.Errorf("failed setting up with a controller manager: %w", err)
	}
	r.controller = c
	return nil
}

// Reconcile is the MachineDeployment controller's: fetch, patch helper, deferred patch.
func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	mc := &cachev1beta1.Memcached{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		if apierrors.IsNotFound(err) {
			r.controller.ClearConsistencyStore(req.NamespacedName, "")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	patchHelper, err := patch.NewHelper(mc, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		patchOpts := []patch.Option{}
		if reterr == nil {
			patchOpts = append(patchOpts, patch.WithStatusObservedGeneration{})
		}
		if err := patchObject(ctx, patchHelper, mc, Available, patchOpts...); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	if !mc.DeletionTimestamp.IsZero() || mc.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.reconcile(ctx, mc)
}

func (r *MemcachedReconciler) reconcile(ctx context.Context, mc *cachev1beta1.Memcached) error {
	if mc.Spec.Server.ConfigMapRef != nil {
		// The benchmark's Memcacheds name no ConfigMap; the example's arguments from one
		// are not what is compared.
		mark(mc, Stalled, metav1.ConditionTrue, "ConfigMapUnsupported", "this operator does not read spec.server.configMapRef")
		mark(mc, Available, metav1.ConditionFalse, "ConfigMapUnsupported", "this operator does not read spec.server.configMapRef")
		progressing(mc, true, "", "")
		return nil
	}
	dep, created, err := child.Ensure(ctx, r.Client, mc, memcached.Deployment(mc))
	if err != nil {
		mark(mc, Available, metav1.ConditionUnknown, "DeploymentFailed", err.Error())
		progressing(mc, false, "DeploymentFailed", err.Error())
		return err
	}
	if created {
		r.controller.DeferNextReconcileUntilCacheUpToDate(mc, capicontrollerutil.StructuredObject(appsv1.SchemeGroupVersion, "Deployment"), dep.ResourceVersion)
	}
	svc, created, err := child.Ensure(ctx, r.Client, mc, memcached.Service(mc))
	if err != nil {
		mark(mc, Available, metav1.ConditionUnknown, "ServiceFailed", err.Error())
		progressing(mc, false, "ServiceFailed", err.Error())
		return err
	}
	if created {
		r.controller.DeferNextReconcileUntilCacheUpToDate(mc, capicontrollerutil.StructuredObject(corev1.SchemeGroupVersion, "Service"), svc.ResourceVersion)
	}
	mc.Status.Replicas, mc.Status.ReadyReplicas, mc.Status.Selector = dep.Status.Replicas, dep.Status.ReadyReplicas, child.Selector(dep)
	deploymentStatus(mc, dep)
	return nil
}

// deploymentStatus sets Available, Progressing, Degraded and Reconciling from dep, as the
// examples report a Deployment.
func deploymentStatus(obj object, dep *appsv1.Deployment) {
	done := child.DeploymentAvailable(dep)
	message := fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, child.Replicas(dep))
	if done {
		mark(obj, Available, metav1.ConditionTrue, "MinimumReplicasAvailable", message)
		mark(obj, Progressing, metav1.ConditionFalse, "RolloutComplete", message)
	} else {
		mark(obj, Available, metav1.ConditionFalse, "RollingOut", message)
		mark(obj, Progressing, metav1.ConditionTrue, "RollingOut", message)
	}
	if child.DeploymentFailed(dep) {
		mark(obj, Degraded, metav1.ConditionTrue, "ProgressDeadlineExceeded", message)
	} else {
		mark(obj, Degraded, metav1.ConditionFalse, "RollingOut", message)
	}
	progressing(obj, done, "RollingOut", message)
}
