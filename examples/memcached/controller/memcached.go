// Package controller holds the Memcached controller: one owned Deployment of memcached,
// sized and configured from the Memcached's spec, and its rollout reported in the
// Available, Progressing and Degraded conditions.
package controller

import (
	"context"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1alpha1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Concurrency is how many Memcacheds the manager reconciles at a time unless its
// --max-concurrent-reconciles flag says otherwise. A reconcile mostly waits for the API
// server, and with controller-runtime's default of one, a thousand new objects would
// wait in line for each other's requests.
const Concurrency = 16

// Image is the memcached image every Memcached runs.
const Image = "memcached:1.4.36-alpine"

// foreignRecheck is how often a Memcached blocked by a Deployment it does not own looks
// again: that Deployment's changes do not reach this controller.
const foreignRecheck = time.Minute

// Setup registers the Memcached controller with mgr.
func Setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&cachev1alpha1.Memcached{}).
		// A rollout's burst of Deployment updates makes one reconcile.
		Watches(&appsv1.Deployment{}, reconcile.EnqueueOwner(mgr, &cachev1alpha1.Memcached{})).
		Complete(reconcile.New(mgr.GetClient(), NewLogic(mgr.GetClient()),
			reconcile.WithRecorder(mgr.GetEventRecorder("memcached-controller")),
			reconcile.WithFieldOwner("memcached-operator")))
}

// NewLogic returns the Memcached controller's logic, which reconcile.New runs: what Setup
// registers, for programs that drive a reconciler without a manager (a benchmark, say).
func NewLogic(c client.Client) reconcile.Logic[*cachev1alpha1.Memcached] {
	return &memcached{client: c}
}

type memcached struct {
	client client.Client
}

func (r *memcached) Reconcile(ctx context.Context, mc *cachev1alpha1.Memcached) requeue.Outcome {
	dep, result, err := ownership.Ensure(ctx, r.client, mc, Deployment(mc))
	switch {
	case ownership.IsNotControlled(err):
		ownership.Readiness{Rollout: ownership.RolloutFailed, Reason: "DeploymentNotOwned",
			Message: fmt.Sprintf("%v: delete it or rename this Memcached", err)}.Mark(mc)
		return requeue.After(foreignRecheck)
	case err != nil:
		return requeue.Retry(err)
	}
	if result.Action == ownership.Updated {
		ctrl.LoggerFrom(ctx).Info("reverted the deployment", "diff", result.Diff)
	}
	scale := ownership.DeploymentScale(dep)
	mc.Status.Replicas, mc.Status.ReadyReplicas, mc.Status.Selector = scale.Replicas, scale.ReadyReplicas, scale.Selector
	ownership.DeploymentReadiness(dep).Mark(mc)
	return requeue.Done()
}

// Deployment is the Deployment a Memcached wants.
func Deployment(mc *cachev1alpha1.Memcached) *appsv1.Deployment {
	labels := map[string]string{
		"app.kubernetes.io/name":       "memcached",
		"app.kubernetes.io/instance":   mc.Name,
		"app.kubernetes.io/managed-by": "memcached-operator",
	}
	pod := corev1.PodSpec{Containers: []corev1.Container{{
		Name:  "memcached",
		Image: Image,
		// -p: the server listens where the Deployment says it does.
		Command: []string{"memcached", "-m=64", "-o", "modern", "-v", "-p", strconv.Itoa(int(mc.Spec.ContainerPort))},
		Ports:   []corev1.ContainerPort{{Name: "memcached", ContainerPort: mc.Spec.ContainerPort}},
	}}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: ownership.Restricted(pod, 1001)}
	return ownership.Deployment(mc.Namespace, mc.Name, mc.Spec.Size, template)
}
