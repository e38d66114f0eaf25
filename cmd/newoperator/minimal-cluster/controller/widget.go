// Package controller holds the Widget controller: for each Widget, which is cluster-scoped,
// a namespace of its own and there a StatefulSet of servers with a volume each, whose
// readiness the Widget's Available, Progressing and Degraded conditions report. It is the
// smallest cluster-scoped operator that owns something; grow it from here.
package controller

import (
	"context"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	starterv1alpha1 "github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/workload"
)

// Image is the image every server of a Widget runs: replace it, and Command, with your own.
const Image = "busybox:1.37"

// Command is what every server of a Widget runs.
var Command = []string{"sleep", "infinity"}

// FieldOwner names the operator in the managed fields of what it writes, and in its events.
const FieldOwner = "widget-operator"

// uid is the user the servers run as: the restricted Pod Security level refuses root.
const uid = 1000

// The bounds of spec.replicas in the Widget's schema (its +kubebuilder:validation markers).
const (
	MinReplicas = 1
	MaxReplicas = 5
)

// ReasonInvalidSpec is Stalled's reason when the spec is one the schema refuses.
const ReasonInvalidSpec = "InvalidSpec"

// ReasonInvalidName is Stalled's reason when the Widget's name makes no namespace's name.
const ReasonInvalidName = "InvalidName"

// namespacePrefix opens the name of the namespace each Widget makes: a Widget is
// cluster-scoped and has no namespace of its own to put its StatefulSet in, and the prefix
// keeps a Widget named default or kube-system away from the namespaces of those names.
const namespacePrefix = "widget-"

// NamespaceOf is the name of the namespace the Widget named name makes and puts its
// StatefulSet in.
func NamespaceOf(name string) string { return namespacePrefix + name }

// foreignRecheck is how often a Widget blocked by an object it does not own looks again:
// that object's changes do not reach this controller.
const foreignRecheck = time.Minute

// New declares the Widget controller, with opts added to its own (a test's clock, say):
// a namespace and, in it, a StatefulSet of its own for each Widget. Everything else, the watches and the cache,
// follows from the declaration. Webhooks join it here too, when a check needs more than
// the CRD's schema and CEL, or a second version needs converting: the declaration's
// WithDefaulter, WithValidator, WithConversion (docs/versions.md; the Memcached template has
// all three).
func New(opts ...reconcile.Option) *reconcile.Controller[*starterv1alpha1.Widget] {
	return reconcile.For(&starterv1alpha1.Widget{}, &logic{}, FieldOwner, append([]reconcile.Option{
		reconcile.WithChildren(&corev1.Namespace{}, &appsv1.StatefulSet{}),
	}, opts...)...)
}

// logic is the Widget controller's logic.
type logic struct{}

// Reconcile ensures the Widget's namespace and StatefulSet, and reports its readiness in
// the status. Deleting the Widget deletes both: the garbage collector deletes what it
// owns, and the namespace's deletion takes the claims of the servers' volumes with it.
func (logic) Reconcile(ctx context.Context, w *starterv1alpha1.Widget, s reconcile.Scope) requeue.Outcome {
	// The schema refuses such a spec, but one can reach the operator past it (written to
	// etcd directly, or stored under an older schema): no retry can make it valid, and the
	// StatefulSet must not follow it. Its next change reconciles it again.
	if r := w.Spec.Replicas; r < MinReplicas || r > MaxReplicas {
		conditions.MarkTrue(w, conditions.Stalled, ReasonInvalidSpec, "spec.replicas %d is not between %d and %d", r, MinReplicas, MaxReplicas)
		return requeue.Done()
	}
	// A cluster-scoped name may be longer, or hold dots, where a namespace's may not:
	// the API server would refuse the namespace on every retry. A new name is a new Widget.
	if errs := validation.IsDNS1123Label(NamespaceOf(w.Name)); len(errs) > 0 {
		conditions.MarkTrue(w, conditions.Stalled, ReasonInvalidName, "the namespace %s cannot be made (%s): recreate this Widget under a name of at most %d lower-case letters, digits and dashes",
			NamespaceOf(w.Name), strings.Join(errs, "; "), validation.DNS1123LabelMaxLength-len(namespacePrefix))
		return requeue.Done()
	}
	_, _, err := ownership.Ensure(ctx, s.Writer, w, Namespace(w))
	switch {
	case ownership.IsNotControlled(err):
		conditions.MarkTrue(w, conditions.Stalled, "NamespaceNotOwned", "%v: delete it or rename this Widget", err)
		return requeue.After(foreignRecheck)
	case err != nil:
		return requeue.Retry(err)
	}
	sts, _, err := ownership.Ensure(ctx, s.Writer, w, StatefulSet(w))
	switch {
	case ownership.IsNotControlled(err):
		// Only a person can settle this: Stalled says so, and the Widget looks again later.
		conditions.MarkTrue(w, conditions.Stalled, "StatefulSetNotOwned", "%v: delete it or rename this Widget", err)
		return requeue.After(foreignRecheck)
	case ownership.IsImmutable(err):
		// The claim template differs from the existing one's, which the API server
		// refuses to change; the rest is applied, and only a person can move the data.
		conditions.MarkTrue(w, conditions.Stalled, "StorageUnchangeable", "%v", err)
		return requeue.Done()
	case err != nil:
		return requeue.Retry(err)
	}
	w.Status.ReadyReplicas = sts.Status.ReadyReplicas
	// Without a PodDisruptionBudget, Available means that a majority of servers is ready.
	readiness.StatefulSet(sts, nil).Mark(w)
	return requeue.Done()
}

// podLabels are the labels of a Widget's pods, which its StatefulSet selects.
func podLabels(w *starterv1alpha1.Widget) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "widget",
		"app.kubernetes.io/instance":   w.Name,
		"app.kubernetes.io/managed-by": FieldOwner,
	}
}

// Namespace is the namespace a Widget makes for its StatefulSet, named after it.
func Namespace(w *starterv1alpha1.Widget) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NamespaceOf(w.Name)}}
}

// StatefulSet is the StatefulSet a Widget wants, in its namespace: spec.replicas servers,
// each with a volume claim of its own, data, mounted at /data.
func StatefulSet(w *starterv1alpha1.Widget) *appsv1.StatefulSet {
	pod := workload.Restricted(corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:         "server",
			Image:        Image,
			Command:      Command,
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		}},
	}, uid)
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels(w)}, Spec: pod}
	data := workload.ClaimTemplate("data", resource.MustParse("1Gi"))
	return workload.StatefulSet(NamespaceOf(w.Name), w.Name, w.Spec.Replicas, template, data)
}
