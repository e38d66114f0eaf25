package capi

import (
	"context"
	"fmt"
	"time"

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

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

// clockRecheck is the longest an At waits for its schedule before it is reconciled again.
const clockRecheck = time.Minute

// AtReconciler runs an At's command in the example's pod once its schedule is due, and
// reports its phase (PENDING, RUNNING, DONE), the pod and the command's exit code.
type AtReconciler struct {
	Client client.Client

	controller capicontrollerutil.Controller
}

// SetupWithManager registers the reconciler with mgr, reconciling concurrency objects at
// a time.
func (r *AtReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	predicateLog := ctrl.LoggerFrom(ctx).WithValues("controller", "at")
	c, err := capicontrollerutil.NewControllerManagedBy(mgr, predicateLog).
		For(&cnatv1alpha1.At{}).
		Owns(&corev1.Pod{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		WithEventFilter(predicates.ResourceNotPausedAndHasFilterLabel(mgr.GetScheme(), predicateLog, "")).
		Build(ctx, r)
	if err != nil {
		return fmt.Errorf("failed setting up with a controller manager: %w", err)
	}
	r.controller = c
	return nil
}

// Reconcile fetches the At, makes its patch helper, defers the patch and reconciles.
func (r *AtReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	a := &cnatv1alpha1.At{}
	if err := r.Client.Get(ctx, req.NamespacedName, a); err != nil {
		if apierrors.IsNotFound(err) {
			r.controller.ClearConsistencyStore(req.NamespacedName, "")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	patchHelper, err := patch.NewHelper(a, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		patchOpts := []patch.Option{}
		if reterr == nil {
			patchOpts = append(patchOpts, patch.WithStatusObservedGeneration{})
		}
		if err := patchObject(ctx, patchHelper, a, Succeeded, patchOpts...); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	if !a.DeletionTimestamp.IsZero() || a.Spec.Suspend || a.Status.Phase == cnatv1alpha1.PhaseDone {
		return ctrl.Result{}, nil
	}
	return r.reconcile(ctx, a)
}

func (r *AtReconciler) reconcile(ctx context.Context, a *cnatv1alpha1.At) (ctrl.Result, error) {
	if a.Status.Phase == "" {
		a.Status.Phase = cnatv1alpha1.PhasePending
	}
	if a.Status.Phase == cnatv1alpha1.PhasePending {
		when, err := time.Parse(time.RFC3339, a.Spec.Schedule)
		if err != nil {
			mark(a, Stalled, metav1.ConditionTrue, "InvalidSchedule", err.Error())
			mark(a, Succeeded, metav1.ConditionFalse, "InvalidSchedule", err.Error())
			progressing(a, true, "", "")
			return ctrl.Result{}, nil
		}
		if wait := time.Until(when); wait > 0 {
			mark(a, Succeeded, metav1.ConditionUnknown, "Scheduled", "the command runs at "+a.Spec.Schedule)
			progressing(a, false, "Scheduled", "the command runs at "+a.Spec.Schedule)
			return ctrl.Result{RequeueAfter: min(wait, clockRecheck)}, nil
		}
		a.Status.Phase = cnatv1alpha1.PhaseRunning
	}

	var pod *corev1.Pod
	if a.Status.PodName == "" {
		created, isNew, err := child.Ensure(ctx, r.Client, a, at.CommandPod(a))
		if err != nil {
			mark(a, Succeeded, metav1.ConditionUnknown, "PodNotCreated", err.Error())
			progressing(a, false, "PodNotCreated", err.Error())
			return ctrl.Result{}, err
		}
		if isNew {
			r.controller.DeferNextReconcileUntilCacheUpToDate(a, capicontrollerutil.StructuredObject(corev1.SchemeGroupVersion, "Pod"), created.ResourceVersion)
		}
		a.Status.PodName, pod = created.Name, created
	} else {
		pod = &corev1.Pod{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Status.PodName}, pod)
		switch {
		case apierrors.IsNotFound(err):
			message := fmt.Sprintf("pod %s was deleted before the command ended", a.Status.PodName)
			mark(a, Succeeded, metav1.ConditionFalse, "PodLost", message)
			progressing(a, true, "", "")
			a.Status.Phase = cnatv1alpha1.PhaseDone
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
		a.Status.ExitCode = &ended.ExitCode
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		a.Status.Phase = cnatv1alpha1.PhaseDone
		mark(a, Succeeded, metav1.ConditionTrue, "CommandSucceeded", "the command succeeded")
		progressing(a, true, "", "")
	case corev1.PodFailed:
		a.Status.Phase = cnatv1alpha1.PhaseDone
		mark(a, Succeeded, metav1.ConditionFalse, "CommandFailed", "the command failed")
		progressing(a, true, "", "")
	default:
		mark(a, Succeeded, metav1.ConditionUnknown, "Running", "pod "+pod.Name+" is "+string(pod.Status.Phase))
		progressing(a, false, "Running", "pod "+pod.Name+" runs the command")
	}
	return ctrl.Result{}, nil
}
