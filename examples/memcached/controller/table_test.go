package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// memcacheds is the Memcached controller's logic in the shell, as Setup builds it, one
// reconcile at a time on an API server alone: no manager, no Deployment controller.
var memcacheds = reconciletest.ReconcilerTests{
	CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
	AddToScheme:    cachev1beta1.AddToScheme,
	Controller:     controller.New(),
}

func TestMemcachedTable(t *testing.T) {
	table := memcacheds
	table.Cases = []reconciletest.ReconcilerTestCase{{
		Name:         "a new Memcached gets a restricted Deployment of memcached on its port, and a Service in front",
		Object:       memcached(2, ""),
		WantRequests: []string{"create deployments", "create services", "patch memcacheds/status"},
		WantObjects:  []client.Object{writtenOutDeployment(), writtenOutService()},
		WantStatus:   rollingOut(2),
	}, {
		Name:             "a converged Memcached writes nothing",
		Object:           memcached(2, ""),
		ReconciledBefore: 1,
		WantObjects:      []client.Object{ownedDeployment(2), ownedService()},
	}, {
		Name:             "a new size is written to the Deployment",
		Object:           memcached(2, ""),
		ReconciledBefore: 1,
		Meanwhile:        resizeTo(3),
		// A new shape of the desired Deployment: Ensure takes over the fields its create
		// left to an update, then applies.
		WantRequests: []string{"patch deployments", "patch deployments", "patch memcacheds/status"},
		WantObjects:  []client.Object{ownedDeployment(3), ownedService()},
	}, {
		Name:         "a Deployment of its name that nobody owns is left alone, and the Memcached says why",
		Object:       memcached(2, ""),
		Given:        []client.Object{someoneElsesDeployment(nil)},
		WantRequests: []string{"patch memcacheds/status"},
		WantObjects:  []client.Object{someoneElsesDeployment(nil)},
		WantStatus:   notOwnedStatus("DeploymentNotOwned", deploymentNotOwned),
		WantEvents:   []string{"Warning DeploymentNotOwned " + deploymentNotOwned},
		WantResult:   rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		Name:   "a Deployment of its name that another object controls is left alone",
		Object: memcached(2, ""),
		Given: []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
			someoneElsesDeployment(controlledBy("v1", "ConfigMap", "other")),
		},
		WantRequests: []string{"patch memcacheds/status"},
		WantObjects:  []client.Object{someoneElsesDeployment(controlledBy("v1", "ConfigMap", "other"))},
		WantStatus:   notOwnedStatus("DeploymentNotOwned", controlledByOther),
		WantEvents:   []string{"Warning DeploymentNotOwned " + controlledByOther},
		WantResult:   rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		// Its creation brings the Memcached back: no requeue.
		Name:         "a ConfigMap named in the spec that does not exist stops the Memcached until it does",
		Object:       memcached(2, "tuned"),
		WantRequests: []string{"patch memcacheds/status"},
		WantStatus: cachev1beta1.MemcachedStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			condition("Ready", "False", "ConfigMapNotFound", configMapNotFound),
			condition("Stalled", "True", "ConfigMapNotFound", configMapNotFound),
		}},
		WantEvents: []string{"Warning ConfigMapNotFound " + configMapNotFound},
	}, {
		Name:         "the arguments of its ConfigMap are added to memcached's command",
		Object:       memcached(2, "tuned"),
		Given:        []client.Object{tuned("-c 2048")},
		WantRequests: []string{"create deployments", "create services", "patch memcacheds/status"},
		WantObjects:  []client.Object{tuned("-c 2048"), ownedDeployment(2, "-c", "2048"), ownedService()},
		WantStatus:   rollingOut(2),
	}, {
		Name:   "a Deployment the API server refuses is retried, with a Warning event at once",
		Object: memcached(2, ""),
		Faults: &reconciletest.Faults{Verbs: []string{"create"}, Resources: []string{"deployments"}, Rate: 1,
			Code: http.StatusForbidden}, // a quota, an admission policy: a person must act
		WantRequests: []string{"create deployments", "patch memcacheds/status"},
		WantStatus: cachev1beta1.MemcachedStatus{ObservedGeneration: 0, // a status that failed a generation does not claim it
			Conditions: []metav1.Condition{
				condition("Ready", "False", "Retrying", "fault injected by reconciletest: create deployments"),
				condition("Reconciling", "True", "Retrying", "fault injected by reconciletest: create deployments"),
			}},
		WantEvents: []string{"Warning ReconcileError fault injected by reconciletest: create deployments"},
		WantErr:    "fault injected",
	}, {
		// Reported once it has failed three times in a row (reconcile.WithReportAfter).
		Name:   "a Deployment create that fails for a moment is retried without a word",
		Object: memcached(2, ""),
		Faults: &reconciletest.Faults{Verbs: []string{"create"}, Resources: []string{"deployments"}, Rate: 1,
			Code: http.StatusServiceUnavailable},
		WantRequests: []string{"create deployments"},
		WantErr:      "fault injected",
	}}
	table.Run(t)
}

// What the Memcached says when it cannot go on.
const (
	deploymentNotOwned = "Deployment " + reconciletest.CaseNamespace + "/cache exists and has no controller; it is left alone: delete it or rename this Memcached"
	controlledByOther  = "Deployment " + reconciletest.CaseNamespace + `/cache exists and is controlled by ConfigMap "other"; it is left alone: delete it or rename this Memcached`
	configMapNotFound  = "ConfigMap " + reconciletest.CaseNamespace + "/tuned, named in spec.server.configMapRef, does not exist or lacks the label " + controller.ConfigMapLabel
)

// memcached is the Memcached the cases reconcile, named cache, with the ConfigMap of
// arguments it names, if any.
func memcached(size int32, configMap string) *cachev1beta1.Memcached {
	mc := &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache"},
		Spec: cachev1beta1.MemcachedSpec{Replicas: size}}
	if configMap != "" {
		mc.Spec.Server.ConfigMapRef = &cachev1beta1.ConfigMapReference{Name: configMap}
	}
	return mc
}

// condition is a condition of generation 1 that changed at the case's time.
func condition(typ, status, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), ObservedGeneration: 1,
		LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow), Reason: reason, Message: message}
}

// rollingOut is the status of a Memcached whose new Deployment the Deployment controller
// has not reported on yet.
func rollingOut(size int32) cachev1beta1.MemcachedStatus {
	counts := fmt.Sprintf("0 of %d replicas available", size)
	return cachev1beta1.MemcachedStatus{ObservedGeneration: 1, Selector: selector, Conditions: []metav1.Condition{
		condition("Available", "False", "AvailabilityNotReported", "the Deployment controller has not reported availability (no Available condition); "+counts),
		condition("Progressing", "True", "RollingOut", counts),
		condition("Degraded", "False", "RollingOut", counts),
		condition("Ready", "False", "RollingOut", counts),
		condition("Reconciling", "True", "RollingOut", counts),
	}}
}

// notOwnedStatus is the status of a Memcached blocked by an object of its name that is not
// its own.
func notOwnedStatus(reason, message string) cachev1beta1.MemcachedStatus {
	return cachev1beta1.MemcachedStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
		condition("Ready", "False", reason, message),
		condition("Stalled", "True", reason, message),
	}}
}

// selector selects the pods of the Memcached cache, as its status says for the scale
// subresource.
const selector = "app.kubernetes.io/instance=cache,app.kubernetes.io/managed-by=memcached-operator,app.kubernetes.io/name=memcached"

// controlledBy is a controller reference that the case completes with the owner's UID.
func controlledBy(apiVersion, kind, name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

// ownedBy is a controller reference to the Memcached cache.
func ownedBy() []metav1.OwnerReference {
	return controlledBy(cachev1beta1.GroupVersion.String(), "Memcached", "cache")
}

// writtenOutDeployment is the Deployment of the Memcached cache of size 2, written out
// rather than built by controller.Deployment: memcached on the default port, restricted,
// controlled by the Memcached.
func writtenOutDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Labels: childLabels(writtenOutLabels()), OwnerReferences: ownedBy()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: writtenOutLabels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: writtenOutLabels()},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1001),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name:    "memcached",
						Image:   "memcached:1.4.36-alpine",
						Command: []string{"memcached", "-m=64", "-o", "modern", "-v", "-p", "11211"},
						Ports:   []corev1.ContainerPort{{Name: "memcached", ContainerPort: 11211}},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
				},
			},
		},
	}
}

// writtenOutService is the Service of the Memcached cache, written out rather than built
// by controller.Service: its pods, on memcached's port.
func writtenOutService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Labels: childLabels(writtenOutLabels()), OwnerReferences: ownedBy()},
		Spec: corev1.ServiceSpec{
			Selector: writtenOutLabels(),
			Ports:    []corev1.ServicePort{{Name: "memcached", Port: 11211, TargetPort: intstr.FromString("memcached")}},
		},
	}
}

// writtenOutLabels are the labels of the Memcached cache's objects and pods.
func writtenOutLabels() map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "memcached",
		"app.kubernetes.io/instance":   "cache",
		"app.kubernetes.io/managed-by": "memcached-operator",
	}
}

// ownedDeployment is the Deployment the Memcached cache of size wants, with args.
func ownedDeployment(size int32, args ...string) *appsv1.Deployment {
	mc := memcached(size, "")
	mc.Spec.Server.Port = 11211 // the schema's default
	d := controller.Deployment(mc, args...)
	d.OwnerReferences = ownedBy()
	d.Labels = childLabels(d.Labels)
	return d
}

// ownedService is the Service the Memcached cache wants.
func ownedService() *corev1.Service {
	mc := memcached(1, "")
	mc.Spec.Server.Port = 11211
	s := controller.Service(mc)
	s.OwnerReferences = ownedBy()
	s.Labels = childLabels(s.Labels)
	return s
}

// childLabels is a copy of labels with the label the shell's Writer gives every child
// (ownership.OwnedByLabel); a copy, for the map may be the selector's too.
func childLabels(labels map[string]string) map[string]string {
	out := map[string]string{ownership.OwnedByLabel: "memcached.cache.example.com"}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// tuned is the ConfigMap of memcached arguments named tuned, labelled for the operator.
func tuned(args string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "tuned", Labels: map[string]string{controller.ConfigMapLabel: ""}},
		Data:       map[string]string{"args": args},
	}
}

// resizeTo sets the Memcached's size, as a person would.
func resizeTo(size int32) func(context.Context, client.Client, string) error {
	return func(ctx context.Context, c client.Client, ns string) error {
		mc := &cachev1beta1.Memcached{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
			return err
		}
		mc.Spec.Replicas = size
		return c.Update(ctx, mc)
	}
}

// someoneElsesDeployment is a Deployment named cache that is not the Memcached's, with
// owners.
func someoneElsesDeployment(owners []metav1.OwnerReference) *appsv1.Deployment {
	d := workload.Deployment("", "cache", 1, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "someone-elses"}},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	})
	d.OwnerReferences = owners
	return d
}
