// Package controller holds the Memcached controller: one owned Deployment of memcached,
// sized and configured from the Memcached's spec (and an optional ConfigMap of arguments),
// a Service in front of it, and the rollout reported in the Available, Progressing and
// Degraded conditions.
package controller

import (
	"context"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	cachev1alpha1 "github.com/reconcilekit/reconcilekit/test/upgrade/testdata/memcached-v1alpha1/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/workload"
)

// Concurrency is how many Memcacheds the manager reconciles at a time unless its
// --max-concurrent-reconciles flag says otherwise. A reconcile mostly waits for the API
// server, and with controller-runtime's default of one, a thousand new objects would
// wait in line for each other's requests.
const Concurrency = 16

// Image is the memcached image every Memcached runs.
const Image = "memcached:1.4.36-alpine"

// ConfigMapLabel marks the ConfigMaps a Memcached may name in spec.configMapName: the
// manager caches those alone, not every ConfigMap of the cluster.
const ConfigMapLabel = "cache.example.com/memcached-config"

// foreignRecheck is how often a Memcached blocked by an object it does not own looks
// again: that object's changes do not reach this controller.
const foreignRecheck = time.Minute

// New declares the Memcached controller, with opts added to its own (a test's clock, say,
// or the manager's --max-concurrent-reconciles): a Deployment and a Service of its own for
// each Memcached, and the ConfigMap it names, of those labelled ConfigMapLabel alone.
func New(opts ...reconcile.Option) *reconcile.Controller[*cachev1alpha1.Memcached] {
	labelled, _ := labels.NewRequirement(ConfigMapLabel, selection.Exists, nil)
	return reconcile.For(&cachev1alpha1.Memcached{}, &memcached{}, "memcached-operator", append([]reconcile.Option{
		reconcile.WithReconcileRequests(""),
		reconcile.WithConcurrency(Concurrency),
		reconcile.WithChildren(&appsv1.Deployment{}, &corev1.Service{}),
		reconcile.WithCache(&corev1.ConfigMap{}, cache.ByObject{Label: labels.NewSelector().Add(*labelled)}),
	}, opts...)...).
		WithSuspend(func(obj *cachev1alpha1.Memcached) bool { return obj.Spec.Suspend }).
		// A ConfigMap's change reaches exactly the Memcacheds that name it.
		WithReferences(&corev1.ConfigMap{}, configMapNames)
}

// configMapNames names the ConfigMaps a Memcached references.
func configMapNames(mc *cachev1alpha1.Memcached) []string {
	if mc.Spec.ConfigMapName == "" {
		return nil
	}
	return []string{mc.Spec.ConfigMapName}
}

// memcached is the Memcached controller's logic.
type memcached struct{}

func (r *memcached) Reconcile(ctx context.Context, mc *cachev1alpha1.Memcached, s reconcile.Scope) requeue.Outcome {
	args, err := r.args(ctx, s.Client, mc)
	if apierrors.IsNotFound(err) {
		// The ConfigMap's creation brings the Memcached back: no need to look again.
		conditions.MarkTrue(mc, conditions.Stalled, "ConfigMapNotFound", "ConfigMap %s/%s, named in spec.configMapName, does not exist or lacks the label %s",
			mc.Namespace, mc.Spec.ConfigMapName, ConfigMapLabel)
		return requeue.Done()
	} else if err != nil {
		return requeue.Retry(err)
	}
	dep, _, err := ownership.Ensure(ctx, s.Writer, mc, Deployment(mc, args...))
	if ownership.IsNotControlled(err) {
		return notOwned(mc, "DeploymentNotOwned", err)
	} else if err != nil {
		return requeue.Retry(err)
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, mc, Service(mc)); ownership.IsNotControlled(err) {
		return notOwned(mc, "ServiceNotOwned", err)
	} else if err != nil {
		return requeue.Retry(err)
	}
	scale := readiness.DeploymentScale(dep)
	mc.Status.Replicas, mc.Status.ReadyReplicas, mc.Status.Selector = scale.Replicas, scale.ReadyReplicas, scale.Selector
	readiness.Deployment(dep).Mark(mc)
	return requeue.Done()
}

// notOwned reports that an object mc needs belongs to someone else, which only a person
// can settle: Stalled, the one way an example says it is stuck.
func notOwned(mc *cachev1alpha1.Memcached, reason string, err error) requeue.Outcome {
	conditions.MarkTrue(mc, conditions.Stalled, reason, "%v: delete it or rename this Memcached", err)
	return requeue.After(foreignRecheck)
}

// args reads the extra memcached arguments of the ConfigMap mc names, if any.
func (r *memcached) args(ctx context.Context, c client.Reader, mc *cachev1alpha1.Memcached) ([]string, error) {
	if mc.Spec.ConfigMapName == "" {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: mc.Namespace, Name: mc.Spec.ConfigMapName}, cm); err != nil {
		return nil, err
	}
	return strings.Fields(cm.Data["args"]), nil
}

// podLabels are the labels of a Memcached's pods, which its Deployment and Service select.
func podLabels(mc *cachev1alpha1.Memcached) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "memcached",
		"app.kubernetes.io/instance":   mc.Name,
		"app.kubernetes.io/managed-by": "memcached-operator",
	}
}

// Deployment is the Deployment a Memcached wants, running memcached with args added.
func Deployment(mc *cachev1alpha1.Memcached, args ...string) *appsv1.Deployment {
	pod := corev1.PodSpec{Containers: []corev1.Container{{
		Name:  "memcached",
		Image: Image,
		// -p: the server listens where the Deployment says it does.
		Command: append([]string{"memcached", "-m=64", "-o", "modern", "-v", "-p", strconv.Itoa(int(mc.Spec.ContainerPort))}, args...),
		Ports:   []corev1.ContainerPort{{Name: "memcached", ContainerPort: mc.Spec.ContainerPort}},
	}}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels(mc)}, Spec: workload.Restricted(pod, 1001)}
	return workload.Deployment(mc.Namespace, mc.Name, mc.Spec.Size, template)
}

// Service is the Service a Memcached wants: a stable name for its pods, on its port.
func Service(mc *cachev1alpha1.Memcached) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: mc.Namespace, Name: mc.Name, Labels: podLabels(mc)},
		Spec: corev1.ServiceSpec{
			Selector: podLabels(mc),
			Ports: []corev1.ServicePort{{
				Name: "memcached", Port: mc.Spec.ContainerPort, TargetPort: intstr.FromString("memcached"),
			}},
		},
	}
}
