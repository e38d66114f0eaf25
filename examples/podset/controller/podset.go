// Package controller holds the PodSet controller: spec.size busybox pods through one owned
// Deployment, their names (sorted) and ready count in the PodSet's status.
package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Concurrency is how many PodSets the manager reconciles at a time unless its
// --max-concurrent-reconciles flag says otherwise. A reconcile mostly waits for the API
// server, and with controller-runtime's default of one, a thousand new objects would
// wait in line for each other's requests.
const Concurrency = 16

const (
	// Image is what every pod runs.
	Image = "busybox:1.36"
	// managedBy labels the pods of every PodSet, so the manager caches those pods only.
	managedBy = "podset-operator"
	// instance labels a pod with the name of its PodSet.
	instance = "app.kubernetes.io/instance"
	// foreignRecheck is how often a PodSet blocked by a Deployment it does not own looks again.
	foreignRecheck = time.Minute
)

// CacheOptions restricts the manager's pod cache to PodSet pods: a cluster-wide pod cache
// would cost memory for every pod of the cluster.
func CacheOptions(o *cache.Options) {
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	o.ByObject[&corev1.Pod{}] = cache.ByObject{
		Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": managedBy}),
	}
}

// Setup registers the PodSet controller with mgr, whose cache must use CacheOptions.
func Setup(mgr ctrl.Manager) error {
	// Each reconcile reads its Deployment's pods through this index, not by matching every
	// pod of the namespace. It is added once the manager runs, so that a missing pod
	// permission fails the pod watch's bounded cache sync instead of hanging the start.
	indexPods := manager.RunnableFunc(func(ctx context.Context) error {
		return ownership.IndexPods(ctx, mgr.GetFieldIndexer())
	})
	if err := mgr.Add(indexPods); err != nil {
		return err
	}
	// A pod's changes (a new name, readiness) reach its PodSet through the instance label.
	podSet := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, pod client.Object) []rtreconcile.Request {
		return []rtreconcile.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: pod.GetLabels()[instance]}}}
	})
	r := reconcile.New(mgr.GetClient(), NewLogic(mgr.GetClient()),
		reconcile.WithRecorder(mgr.GetEventRecorder("podset-controller")),
		reconcile.WithFieldOwner("podset-operator"))
	return ctrl.NewControllerManagedBy(mgr).
		// The watch event of the shell's own status write would make a reconcile with
		// nothing to do.
		For(&appsv1alpha1.PodSet{}, builder.WithPredicates(r.IgnoreOwnWrites())).
		// A rollout's burst of Deployment and pod updates makes one reconcile.
		Watches(&appsv1.Deployment{}, reconcile.EnqueueOwner(mgr, &appsv1alpha1.PodSet{})).
		Watches(&corev1.Pod{}, reconcile.Coalesce(podSet, reconcile.CoalesceDelay)).
		Complete(r)
}

// NewLogic returns the PodSet controller's logic, which reconcile.New runs: what Setup
// registers, for programs that drive a reconciler without a manager (a benchmark, say).
func NewLogic(c client.Client) reconcile.Logic[*appsv1alpha1.PodSet] {
	return &podset{client: c}
}

type podset struct {
	client client.Client
}

func (r *podset) Reconcile(ctx context.Context, ps *appsv1alpha1.PodSet) requeue.Outcome {
	dep, _, err := ownership.Ensure(ctx, r.client, ps, Deployment(ps))
	switch {
	case ownership.IsNotControlled(err):
		ownership.Readiness{Rollout: ownership.RolloutFailed, Reason: "DeploymentNotOwned",
			Message: fmt.Sprintf("%v: delete it or rename this PodSet", err)}.Mark(ps)
		return requeue.After(foreignRecheck)
	case err != nil:
		return requeue.Retry(err)
	}
	pods, err := ownership.Pods(ctx, r.client, dep)
	if err != nil {
		return requeue.Retry(err)
	}
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		if p.DeletionTimestamp.IsZero() {
			names = append(names, p.Name)
		}
	}
	// Sorted, so that the same pods always make the same status and no needless write.
	slices.Sort(names)
	ps.Status.PodNames = names
	scale := ownership.DeploymentScale(dep)
	ps.Status.Replicas, ps.Status.ReadyReplicas, ps.Status.Selector = scale.Replicas, scale.ReadyReplicas, scale.Selector
	ownership.DeploymentReadiness(dep).Mark(ps)
	return requeue.Done()
}

// Deployment is the Deployment a PodSet wants.
func Deployment(ps *appsv1alpha1.PodSet) *appsv1.Deployment {
	labels := map[string]string{
		"app.kubernetes.io/name":       "podset",
		instance:                       ps.Name,
		"app.kubernetes.io/managed-by": managedBy,
	}
	pod := corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "busybox",
		Image:   Image,
		Command: []string{"sleep", "3600"},
		Ports:   []corev1.ContainerPort{{Name: "podset", ContainerPort: 1234}},
	}}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: ownership.Restricted(pod, 1001)}
	return ownership.Deployment(ps.Namespace, ps.Name, ps.Spec.Size, template)
}
