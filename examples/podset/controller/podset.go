// Package controller holds the PodSet controller: spec.size busybox pods through one owned
// Deployment, their names (sorted) and ready count in the PodSet's status.
package controller

import (
	"context"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/workload"
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
	// MaxSize is the largest spec.size the PodSet's schema allows.
	MaxSize = 100
	// ReasonInvalidSpec is Stalled's reason when the spec is one the schema refuses.
	ReasonInvalidSpec = "InvalidSpec"
)

// New declares the PodSet controller, with opts added to its own (a test's clock, say, or
// the manager's --max-concurrent-reconciles): a Deployment of its own for each PodSet, and
// that Deployment's pods, of PodSets alone, followed by their instance label.
func New(opts ...reconcile.Option) *reconcile.Controller[*appsv1alpha1.PodSet] {
	// A pod's changes (a new name, readiness) reach its PodSet through the instance label.
	byInstance := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, pod client.Object) []rtreconcile.Request {
		return []rtreconcile.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: pod.GetLabels()[instance]}}}
	})
	return reconcile.For(&appsv1alpha1.PodSet{}, &podset{}, "podset-operator", append([]reconcile.Option{
		reconcile.WithReconcileRequests(""),
		reconcile.WithConcurrency(Concurrency),
		reconcile.WithChildren(&appsv1.Deployment{}),
		reconcile.WithWatch(&corev1.Pod{}, byInstance),
		// A cluster-wide pod cache would cost memory for every pod of the cluster.
		reconcile.WithCache(&corev1.Pod{}, cache.ByObject{
			Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": managedBy}),
		}),
	}, opts...)...).
		WithSuspend(func(obj *appsv1alpha1.PodSet) bool { return obj.Spec.Suspend })
}

// podset is the PodSet controller's logic.
type podset struct{}

func (r *podset) Reconcile(ctx context.Context, ps *appsv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	// The schema refuses such a size, but a spec can reach the operator past it (written
	// to etcd directly, or stored under an older schema): no retry can make it valid, and
	// the Deployment's replicas must not follow it. Its next change reconciles it again.
	if ps.Spec.Size < 0 || ps.Spec.Size > MaxSize {
		conditions.MarkTrue(ps, conditions.Stalled, ReasonInvalidSpec, "spec.size %d is not between 0 and %d", ps.Spec.Size, MaxSize)
		return requeue.Done()
	}
	dep, _, err := ownership.Ensure(ctx, s.Writer, ps, Deployment(ps))
	switch {
	case ownership.IsNotControlled(err):
		conditions.MarkTrue(ps, conditions.Stalled, "DeploymentNotOwned", "%v: delete it or rename this PodSet", err)
		return requeue.After(foreignRecheck)
	case err != nil:
		return requeue.Retry(err)
	}
	pods, err := readiness.Pods(ctx, s.Client, dep)
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
	scale := readiness.DeploymentScale(dep)
	ps.Status.Replicas, ps.Status.ReadyReplicas, ps.Status.Selector = scale.Replicas, scale.ReadyReplicas, scale.Selector
	readiness.Deployment(dep).Mark(ps)
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
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: workload.Restricted(pod, 1001)}
	return workload.Deployment(ps.Namespace, ps.Name, ps.Spec.Size, template)
}
