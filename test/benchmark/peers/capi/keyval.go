package capi

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/cluster-api/util/conditions"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/finalizers"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

// KeyvalReconciler runs a Keyval as the example's ConfigMap, PodDisruptionBudget, two
// Services and StatefulSet, reports the StatefulSet's readiness and scale, and holds a
// deleted Keyval with the example's finalizer until its volumes are deleted, when its
// spec.storage.whenDeleted says so.
type KeyvalReconciler struct {
	Client client.Client
	// APIReader reads what the cache does not hold: the volume claims a deleted Keyval's
	// cleanup deletes.
	APIReader client.Reader

	controller capicontrollerutil.Controller
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time.
func (r *KeyvalReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	predicateLog := ctrl.LoggerFrom(ctx).WithValues("controller", "keyval")
	c, err := capicontrollerutil.NewControllerManagedBy(mgr, predicateLog).
		For(&storev1alpha1.Keyval{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		WithEventFilter(predicates.ResourceNotPausedAndHasFilterLabel(mgr.GetScheme(), predicateLog, "")).
		Build(ctx, r)
	if err != nil {
		return fmt.Errorf("failed setting up with a controller manager: %w", err)
	}
	r.controller = c
	return nil
}

// Reconcile is the MachineDeployment controller's: fetch, the finalizer ensured before
// anything else, patch helper, deferred patch, and the deletion's own reconcile.
func (r *KeyvalReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	kv := &storev1alpha1.Keyval{}
	if err := r.Client.Get(ctx, req.NamespacedName, kv); err != nil {
		if apierrors.IsNotFound(err) {
			r.controller.ClearConsistencyStore(req.NamespacedName, "")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	// Add finalizer first if not set to avoid the race condition between init and delete.
	if finalizerAdded, err := finalizers.EnsureFinalizer(ctx, r.Client, kv, keyval.Finalizer); err != nil || finalizerAdded {
		return ctrl.Result{}, err
	}
	patchHelper, err := patch.NewHelper(kv, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		patchOpts := []patch.Option{}
		if reterr == nil {
			patchOpts = append(patchOpts, patch.WithStatusObservedGeneration{})
		}
		if err := patchObject(ctx, patchHelper, kv, Available, patchOpts...); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	if !kv.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, kv)
	}
	if kv.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.reconcile(ctx, kv)
}

func (r *KeyvalReconciler) reconcile(ctx context.Context, kv *storev1alpha1.Keyval) error {
	// A spec the schema refuses cannot succeed on a retry: stalled until it changes.
	if err := keyval.Invalid(kv); err != nil {
		mark(kv, Stalled, metav1.ConditionTrue, keyval.ReasonInvalidSpec, err.Error())
		progressing(kv, true, "", "")
		return nil
	}
	conditions.Delete(kv, Stalled)
	failed := func(reason string, err error) error {
		mark(kv, Available, metav1.ConditionUnknown, reason, err.Error())
		progressing(kv, false, reason, err.Error())
		return err
	}
	config := keyval.ConfigMap(kv)
	created, isNew, err := child.Ensure(ctx, r.Client, kv, config)
	if err != nil {
		return failed("ConfigMapFailed", err)
	}
	r.deferUntilCached(kv, isNew, corev1.SchemeGroupVersion, "ConfigMap", created)
	pdb, isNew, err := child.Ensure(ctx, r.Client, kv, keyval.PodDisruptionBudget(kv))
	if err != nil {
		return failed("PodDisruptionBudgetFailed", err)
	}
	r.deferUntilCached(kv, isNew, policyv1.SchemeGroupVersion, "PodDisruptionBudget", pdb)
	for _, svc := range []*corev1.Service{keyval.HeadlessService(kv), keyval.Service(kv)} {
		created, isNew, err := child.Ensure(ctx, r.Client, kv, svc)
		if err != nil {
			return failed("ServiceFailed", err)
		}
		r.deferUntilCached(kv, isNew, corev1.SchemeGroupVersion, "Service", created)
	}
	desired, err := keyval.StatefulSet(kv, config)
	if err != nil {
		return err
	}
	sts, isNew, err := child.Ensure(ctx, r.Client, kv, desired)
	if err != nil {
		return failed("StatefulSetFailed", err)
	}
	r.deferUntilCached(kv, isNew, appsv1.SchemeGroupVersion, "StatefulSet", sts)
	kv.Status.Replicas, kv.Status.ReadyReplicas, kv.Status.Selector = sts.Status.Replicas, sts.Status.ReadyReplicas, child.StatefulSetSelector(sts)
	statefulSetStatus(kv, sts, pdb)
	return nil
}

// deferUntilCached has kv's next reconcile wait until the cache has seen obj, a child of
// kind in gv this reconcile created (isNew), as Cluster API's controllers do after a
// create.
func (r *KeyvalReconciler) deferUntilCached(kv *storev1alpha1.Keyval, isNew bool, gv schema.GroupVersion, kind string, obj client.Object) {
	if isNew {
		r.controller.DeferNextReconcileUntilCacheUpToDate(kv, capicontrollerutil.StructuredObject(gv, kind), obj.GetResourceVersion())
	}
}

// reconcileDelete is the cleanup of a deleted Keyval, as the MachineDeployment
// controller's reconcileDelete: with spec.storage.whenDeleted Delete, its StatefulSet
// and then its volume claims, looked at again until they are gone (claims are not
// watched); then the finalizer goes, which the deferred patch writes.
func (r *KeyvalReconciler) reconcileDelete(ctx context.Context, kv *storev1alpha1.Keyval) (ctrl.Result, error) {
	if kv.Spec.Storage.WhenDeleted == storev1alpha1.Delete {
		desired, err := keyval.StatefulSet(kv, keyval.ConfigMap(kv))
		if err != nil {
			return ctrl.Result{}, err
		}
		left, err := child.DeleteWithClaims(ctx, r.Client, r.APIReader, kv, desired)
		if err != nil {
			return ctrl.Result{}, err
		}
		if left > 0 {
			return ctrl.Result{RequeueAfter: child.ClaimsRecheck}, nil
		}
	}
	r.controller.ClearConsistencyStore(client.ObjectKeyFromObject(kv), kv.UID)
	controllerutil.RemoveFinalizer(kv, keyval.Finalizer)
	return ctrl.Result{}, nil
}

// statefulSetStatus sets Available, Progressing, Degraded and Reconciling from sts,
// protected by pdb, as the example reports its StatefulSet: Available while the budget's
// minimum of servers are ready, Progressing and Reconciling until the rollout is
// complete.
func statefulSetStatus(obj object, sts *appsv1.StatefulSet, pdb *policyv1.PodDisruptionBudget) {
	serving, counts := child.StatefulSetServing(sts, pdb)
	if serving {
		mark(obj, Available, metav1.ConditionTrue, "MinimumReplicasAvailable", "minimum availability: "+counts)
	} else {
		mark(obj, Available, metav1.ConditionFalse, "MinimumReplicasUnavailable", "below minimum availability: "+counts)
	}
	message := fmt.Sprintf("%d of %d replicas ready", sts.Status.ReadyReplicas, child.StatefulSetReplicas(sts))
	done := child.StatefulSetRolledOut(sts)
	if done {
		mark(obj, Progressing, metav1.ConditionFalse, "RolloutComplete", message)
		mark(obj, Degraded, metav1.ConditionFalse, "RolloutComplete", message)
	} else {
		mark(obj, Progressing, metav1.ConditionTrue, "RollingOut", message)
		mark(obj, Degraded, metav1.ConditionFalse, "RollingOut", message)
	}
	progressing(obj, done, "RollingOut", message)
}
