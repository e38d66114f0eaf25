package seed

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
)

// AtReconciler is cnat's At controller, in its kubebuilder form.
type AtReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// SetupWithManager registers the controller with mgr, watching Ats and the pods they
// control; every pod of the cluster is cached.
func (r *AtReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&cnatv1alpha1.At{}).
		Owns(&corev1.Pod{}).
		Complete(r)
}

// Reconcile follows the seed's state diagram PENDING -> RUNNING -> DONE and writes the
// whole status after every step, including the step that only launched the pod.
func (r *AtReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	reqLogger := logf.FromContext(ctx).WithValues("namespace", req.Namespace, "at", req.Name)
	reqLogger.Info("=== Reconciling At")

	instance := &cnatv1alpha1.At{}
	if err := r.Get(ctx, req.NamespacedName, instance); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}

	if instance.Status.Phase == "" {
		instance.Status.Phase = cnatv1alpha1.PhasePending
	}

	switch instance.Status.Phase {
	case cnatv1alpha1.PhasePending:
		reqLogger.Info("Phase: PENDING")
		reqLogger.Info("Checking schedule", "Target", instance.Spec.Schedule)
		d, err := timeUntilSchedule(instance.Spec.Schedule)
		if err != nil {
			// A typo in the schedule is retried forever, with backoff.
			reqLogger.Error(err, "Schedule parsing failure")
			return ctrl.Result{}, err
		}
		if d > 0 {
			return ctrl.Result{RequeueAfter: d}, nil
		}
		reqLogger.Info("It's time!", "Ready to execute", instance.Spec.Command)
		instance.Status.Phase = cnatv1alpha1.PhaseRunning
	case cnatv1alpha1.PhaseRunning:
		reqLogger.Info("Phase: RUNNING")
		pod := newPodForCR(instance)
		if err := controllerutil.SetControllerReference(instance, pod, r.Scheme); err != nil {
			return ctrl.Result{}, err
		}
		found := &corev1.Pod{}
		err := r.Get(ctx, types.NamespacedName{Name: pod.Name, Namespace: pod.Namespace}, found)
		if err != nil && apierrors.IsNotFound(err) {
			// A cache that has not seen the pod yet makes this create fail with
			// AlreadyExists, retried with backoff.
			if err := r.Create(ctx, pod); err != nil {
				return ctrl.Result{}, err
			}
			reqLogger.Info("Pod launched", "name", pod.Name)
		} else if err != nil {
			return ctrl.Result{}, err
		} else if found.Status.Phase == corev1.PodFailed || found.Status.Phase == corev1.PodSucceeded {
			reqLogger.Info("Container terminated", "reason", found.Status.Reason, "message", found.Status.Message)
			instance.Status.Phase = cnatv1alpha1.PhaseDone
		} else {
			// The pod's next change brings the At back.
			return ctrl.Result{}, nil
		}
	case cnatv1alpha1.PhaseDone:
		reqLogger.Info("Phase: DONE")
		return ctrl.Result{}, nil
	default:
		reqLogger.Info("NOP")
		return ctrl.Result{}, nil
	}

	if err := r.Status().Update(ctx, instance); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// newPodForCR is the seed's one-shot busybox pod, named after the At. The seed's restart
// policy is OnFailure, under which a failing command restarts forever and never reaches
// Failed; the simulated nodes of the benchmark complete only pods that run once, so the
// baseline uses Never. Its commands all succeed, where the two policies end alike.
func newPodForCR(cr *cnatv1alpha1.At) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      cr.Name + "-pod",
			Namespace: cr.Namespace,
			Labels:    map[string]string{"app": cr.Name},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:    "busybox",
				Image:   "busybox",
				Command: strings.Split(cr.Spec.Command, " "),
			}},
			RestartPolicy: corev1.RestartPolicyNever,
		},
	}
}

// timeUntilSchedule is how long until the schedule, negative once it is past.
func timeUntilSchedule(schedule string) (time.Duration, error) {
	now := time.Now().UTC()
	s, err := time.Parse("2006-01-02T15:04:05Z", schedule)
	if err != nil {
		return 0, err
	}
	return s.Sub(now), nil
}
