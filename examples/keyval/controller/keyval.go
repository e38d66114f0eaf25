// Package controller holds the Keyval controller, the template for stateful operators: a
// StatefulSet of key-value servers with a volume claim for each, configured through a
// ConfigMap built from the Keyval's spec, a headless Service that names the servers, a
// Service for clients and a PodDisruptionBudget that keeps a majority of them serving. Its
// rollout is reported in the Available, Progressing and Degraded conditions, and a deleted
// Keyval may take its volumes with it (spec.storage.whenDeleted: Delete).
package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/workload"
)

// Concurrency is how many Keyvals the manager reconciles at a time unless its
// --max-concurrent-reconciles flag says otherwise: a reconcile mostly waits for the API
// server.
const Concurrency = 16

// Image is the image every server of a Keyval runs.
const Image = "redis:7.4-alpine"

// Port is the port the servers listen on, and the Services' port.
const Port = 6379

// Finalizer holds a deleted Keyval until its volumes are deleted, when its
// spec.storage.whenDeleted says so.
const Finalizer = "store.example.com/volumes"

// ConfigFile is the key of the servers' configuration file in a Keyval's ConfigMap.
const ConfigFile = "redis.conf"

// managedBy is the app.kubernetes.io/managed-by label of every object the operator makes.
// The manager caches the operator's own ConfigMaps alone, not every ConfigMap of the
// cluster, by the label the Writer gives every child (ownership.OwnedByLabel).
const managedBy = "keyval-operator"

// uid is the user the servers run as, the image's own.
const uid = 999

// foreignRecheck is how often a Keyval blocked by an object it does not own looks again:
// that object's changes do not reach this controller.
const foreignRecheck = time.Minute

// claimsRecheck is how often a deleted Keyval's cleanup looks whether its claims are gone:
// the operator does not watch claims, which it neither owns nor references.
const claimsRecheck = 2 * time.Second

// New declares the Keyval controller, with opts added to its own (a test's clock, say, or
// the manager's --max-concurrent-reconciles): a StatefulSet, two Services, a
// PodDisruptionBudget and a ConfigMap of its own for each Keyval, and a finalizer that
// deletes its volumes when it goes, if it says so.
func New(opts ...reconcile.Option) *reconcile.Controller[*storev1alpha1.Keyval] {
	return reconcile.For(&storev1alpha1.Keyval{}, &logic{}, managedBy, append([]reconcile.Option{
		reconcile.WithReconcileRequests(""),
		reconcile.WithConcurrency(Concurrency),
		reconcile.WithChildren(&appsv1.StatefulSet{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &corev1.ConfigMap{}),
		// Their specs are what the Keyval reads of them: the disruption controller's
		// rewrites of the budget's status, for minutes behind a burst, wake nothing.
		reconcile.WithStatusIgnored(&corev1.Service{}, &policyv1.PodDisruptionBudget{}),
		// Deleting claims waits for their pods to go; longer than that, something holds them.
		reconcile.WithCleanupDeadline(5 * time.Minute),
	}, opts...)...).
		WithSuspend(func(kv *storev1alpha1.Keyval) bool { return kv.Spec.Suspend }).
		WithFinalizer(Finalizer, deleteVolumes)
}

// logic is the Keyval controller's logic.
type logic struct{}

// Reconcile ensures the Keyval's children, its ConfigMap first, whose hash its StatefulSet
// carries, and reports the StatefulSet's readiness and scale in its status.
func (r *logic) Reconcile(ctx context.Context, kv *storev1alpha1.Keyval, s reconcile.Scope) requeue.Outcome {
	// The schema refuses such a spec, but one can reach the operator past it (written to
	// etcd directly, or stored under an older schema): no retry can make it valid, and the
	// children must not follow it. Its next change reconciles it again.
	if err := Invalid(kv); err != nil {
		conditions.MarkTrue(kv, conditions.Stalled, ReasonInvalidSpec, "%v", err)
		return requeue.Done()
	}
	config := ConfigMap(kv)
	if _, _, err := ownership.Ensure(ctx, s.Writer, kv, config); err != nil {
		return failed(kv, "ConfigMapNotOwned", err)
	}
	pdb, _, err := ownership.Ensure(ctx, s.Writer, kv, PodDisruptionBudget(kv))
	if err != nil {
		return failed(kv, "PodDisruptionBudgetNotOwned", err)
	}
	for _, svc := range []*corev1.Service{HeadlessService(kv), Service(kv)} {
		if _, _, err := ownership.Ensure(ctx, s.Writer, kv, svc); err != nil {
			return failed(kv, "ServiceNotOwned", err)
		}
	}
	desired, err := StatefulSet(kv, config)
	if err != nil {
		return requeue.Terminal(err)
	}
	sts, _, err := ownership.Ensure(ctx, s.Writer, kv, desired)
	immutable := ownership.IsImmutable(err)
	if err != nil && !immutable {
		return failed(kv, "StatefulSetNotOwned", err)
	}
	scale := readiness.StatefulSetScale(sts)
	kv.Status.Replicas, kv.Status.ReadyReplicas, kv.Status.Selector = scale.Replicas, scale.ReadyReplicas, scale.Selector
	ready := readiness.StatefulSet(sts, pdb)
	if immutable {
		// Everything else of the StatefulSet is applied, and it serves; only a person can
		// give the existing claims another size or class (the error says how). Degraded
		// says so, which makes the Keyval Stalled, and no retry is asked for: the next
		// change of the Keyval or of its StatefulSet reconciles again.
		ready.Rollout, ready.Reason, ready.Message = readiness.RolloutFailed, "StorageUnchangeable", err.Error()
	}
	ready.Mark(kv)
	return requeue.Done()
}

// ReasonInvalidSpec is Stalled's reason when the spec is one the schema refuses.
const ReasonInvalidSpec = "InvalidSpec"

// The bounds of spec.replicas in the Keyval's schema.
const (
	MinReplicas = 1
	MaxReplicas = 5
)

// Invalid says what of kv's spec its schema refuses, as far as the operator relies on it:
// the number of servers, and what happens to their volumes on deletion; nil for a spec the
// operator can act on. Such a spec still reaches an operator written past the schema or
// stored under an older one.
func Invalid(kv *storev1alpha1.Keyval) error {
	if r := kv.Spec.Replicas; r < MinReplicas || r > MaxReplicas {
		return fmt.Errorf("spec.replicas %d is not between %d and %d", r, MinReplicas, MaxReplicas)
	}
	switch w := kv.Spec.Storage.WhenDeleted; w {
	case "", storev1alpha1.Retain, storev1alpha1.Delete: // "" is Retain, the default
	default:
		return fmt.Errorf("spec.storage.whenDeleted %q is neither %s nor %s", w, storev1alpha1.Retain, storev1alpha1.Delete)
	}
	return nil
}

// failed reports err: an object kv needs that belongs to someone else, which only a person
// can settle, as Stalled, looked at again later; anything else retried.
func failed(kv *storev1alpha1.Keyval, reason string, err error) requeue.Outcome {
	if !ownership.IsNotControlled(err) {
		return requeue.Retry(err)
	}
	conditions.MarkTrue(kv, conditions.Stalled, reason, "%v: delete it or rename this Keyval", err)
	return requeue.After(foreignRecheck)
}

// podLabels are the labels of a Keyval's pods, which its StatefulSet, Services and
// PodDisruptionBudget select, and which its volume claims get from the StatefulSet.
func podLabels(kv *storev1alpha1.Keyval) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "keyval",
		"app.kubernetes.io/instance":   kv.Name,
		"app.kubernetes.io/managed-by": managedBy,
	}
}

// ConfigMap is the ConfigMap a Keyval wants: the servers' configuration file, the
// operator's directives first, then the Keyval's spec.config in the order of their names,
// so that the same spec always makes the same file, and the same config hash.
func ConfigMap(kv *storev1alpha1.Keyval) *corev1.ConfigMap {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by keyval-operator from Keyval %s: edit spec.config instead.\n", kv.Name)
	fmt.Fprintf(&b, "port %d\ndir /data\nappendonly yes\n", Port)
	for _, name := range slices.Sorted(maps.Keys(kv.Spec.Config)) {
		fmt.Fprintf(&b, "%s %s\n", name, kv.Spec.Config[name])
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: kv.Namespace, Name: configMapName(kv), Labels: podLabels(kv)},
		Data:       map[string]string{ConfigFile: b.String()},
	}
}

// configMapName is the name of a Keyval's ConfigMap.
func configMapName(kv *storev1alpha1.Keyval) string { return kv.Name + "-config" }

// StatefulSet is the StatefulSet a Keyval wants: a server for each replica, reading config,
// the Keyval's ConfigMap, with a volume claim of its own. The pod template carries config's
// hash, so that a change of the configuration rolls the servers, once.
func StatefulSet(kv *storev1alpha1.Keyval, config *corev1.ConfigMap) (*appsv1.StatefulSet, error) {
	pod := workload.Restricted(corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:    "keyval",
			Image:   Image,
			Command: []string{"redis-server", "/etc/redis/" + ConfigFile},
			Ports:   []corev1.ContainerPort{{Name: "redis", ContainerPort: Port}},
			// Ready once it accepts connections: the PodDisruptionBudget and the rolling
			// update count on it.
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("redis")}}},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "data", MountPath: "/data"},
				{Name: "config", MountPath: "/etc/redis", ReadOnly: true},
			},
		}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: config.Name}},
		}}},
	}, uid)
	// The volume is the server's to write: it belongs to the server's group.
	pod.SecurityContext.FSGroup = ptr.To[int64](uid)
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels(kv)}, Spec: pod}
	if err := ownership.SetConfigHash(&template, config); err != nil {
		return nil, err
	}
	size := resource.MustParse("1Gi")
	if s := kv.Spec.Storage.Size; s != nil {
		size = *s
	}
	data := workload.ClaimTemplate("data", size)
	if c := kv.Spec.Storage.ClassName; c != "" {
		data.Spec.StorageClassName = &c
	}
	return workload.StatefulSet(kv.Namespace, kv.Name, kv.Spec.Replicas, template, data), nil
}

// HeadlessService is the headless Service a Keyval wants, which names its servers
// (keyval-0.<name>.<namespace>.svc) for them to find each other.
func HeadlessService(kv *storev1alpha1.Keyval) *corev1.Service {
	return workload.HeadlessService(kv.Namespace, kv.Name, podLabels(kv), servicePort())
}

// Service is the Service a Keyval's clients connect to, <name>-client: the ready servers.
func Service(kv *storev1alpha1.Keyval) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: kv.Namespace, Name: kv.Name + "-client", Labels: podLabels(kv)},
		Spec:       corev1.ServiceSpec{Selector: podLabels(kv), Ports: []corev1.ServicePort{servicePort()}},
	}
}

// servicePort is the port of a Keyval's Services.
func servicePort() corev1.ServicePort {
	return corev1.ServicePort{Name: "redis", Port: Port, TargetPort: intstr.FromString("redis")}
}

// PodDisruptionBudget is the PodDisruptionBudget a Keyval wants: a drain evicts a server
// only while a majority of them, a quorum, stays ready. A Keyval of one server keeps it,
// so a drain waits for someone to scale it up or delete the pod.
func PodDisruptionBudget(kv *storev1alpha1.Keyval) *policyv1.PodDisruptionBudget {
	return workload.PodDisruptionBudget(kv.Namespace, kv.Name, intstr.FromInt32(kv.Spec.Replicas/2+1), podLabels(kv))
}

// deleteVolumes is the cleanup of a deleted Keyval: with spec.storage.whenDeleted Delete,
// it deletes the Keyval's StatefulSet, then its volume claims, and is done once they are
// gone. Until then the Keyval stays, so that a Keyval created again under its name cannot
// find the old claims, which are named after it, and the old data.
func deleteVolumes(ctx context.Context, kv *storev1alpha1.Keyval, s reconcile.Scope) requeue.Outcome {
	if kv.Spec.Storage.WhenDeleted != storev1alpha1.Delete {
		return requeue.Done()
	}
	// The StatefulSet first: it would make a claim again for a pod it recreates.
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: kv.Namespace, Name: kv.Name}}
	if _, err := ownership.Delete(ctx, s.Writer, kv, sts); ownership.IsNotControlled(err) {
		return requeue.Done() // its claims are someone else's too
	} else if err != nil {
		return requeue.Retry(err)
	}
	// Read fresh: claims are not cached, and a deleted one must not be taken for present.
	var claims corev1.PersistentVolumeClaimList
	if err := s.APIReader.List(ctx, &claims, client.InNamespace(kv.Namespace), client.MatchingLabels(podLabels(kv))); err != nil {
		return requeue.Retry(err)
	}
	left := 0
	for _, c := range claims.Items {
		if !isClaimOf(kv, c.Name) {
			continue
		}
		left++
		if c.DeletionTimestamp != nil {
			continue // gone once no pod uses it
		}
		if err := s.Writer.Client.Delete(ctx, &c, client.Preconditions{UID: &c.UID}); client.IgnoreNotFound(err) != nil {
			return requeue.Retry(err)
		}
	}
	if left > 0 {
		return requeue.After(claimsRecheck)
	}
	return requeue.Done()
}

// isClaimOf reports whether the claim of this name is one the StatefulSet of kv made:
// data-<name>-<ordinal>.
func isClaimOf(kv *storev1alpha1.Keyval, name string) bool {
	ordinal, ok := strings.CutPrefix(name, "data-"+kv.Name+"-")
	_, err := strconv.ParseUint(ordinal, 10, 32)
	return ok && err == nil
}
