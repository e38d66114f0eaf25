package controller_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// podSets is the PodSet controller's logic in the shell, as Setup builds it, one
// reconcile at a time on an API server alone: no manager, no Deployment controller, no
// pods but those a case gives.
var podSets = reconciletest.ReconcilerTests{
	CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
	AddToScheme:    appsv1alpha1.AddToScheme,
	Controller:     controller.New(),
}

func TestPodSetTable(t *testing.T) {
	table := podSets
	table.Cases = []reconciletest.ReconcilerTestCase{{
		Name:         "a new PodSet gets its Deployment and waits for it",
		Object:       podSet(2),
		WantRequests: []string{"create deployments", "patch podsets/status"},
		WantObjects:  []client.Object{ownedDeployment(2)},
		WantStatus: appsv1alpha1.PodSetStatus{
			ObservedGeneration: 1,
			Selector:           selector,
			Conditions: []metav1.Condition{
				condition("Available", "False", "AvailabilityNotReported", "the Deployment controller has not reported availability (no Available condition); 0 of 2 replicas available"),
				condition("Progressing", "True", "RollingOut", "0 of 2 replicas available"),
				condition("Degraded", "False", "RollingOut", "0 of 2 replicas available"),
				condition("Ready", "False", "RollingOut", "0 of 2 replicas available"),
				condition("Reconciling", "True", "RollingOut", "0 of 2 replicas available"),
			},
		},
	}, {
		Name:             "a converged PodSet writes nothing",
		Object:           podSet(2),
		ReconciledBefore: 1,
		WantObjects:      []client.Object{ownedDeployment(2)},
	}, {
		Name:             "a ready Deployment makes the PodSet Available, its pods listed sorted",
		Object:           podSet(2),
		ReconciledBefore: 1,
		Given:            []client.Object{pod("web-b"), pod("web-a"), pod("someone-elses")},
		Meanwhile:        rolledOut(2),
		WantRequests:     []string{"patch podsets/status"},
		WantStatus: appsv1alpha1.PodSetStatus{
			ObservedGeneration: 1,
			PodNames:           []string{"web-a", "web-b"}, // sorted, and its own pods alone
			Replicas:           2,
			ReadyReplicas:      2,
			Selector:           selector,
			Conditions: []metav1.Condition{
				condition("Available", "True", "MinimumReplicasAvailable", "minimum availability: 2 of 2 replicas available"),
				condition("Progressing", "False", "RolloutComplete", "2 of 2 replicas available"),
				condition("Degraded", "False", "RolloutComplete", "2 of 2 replicas available"),
				condition("Ready", "True", "Reconciled", ""),
			},
		},
	}, {
		Name:             "a new size is written to the Deployment",
		Object:           podSet(2),
		ReconciledBefore: 1,
		Meanwhile:        resize(3),
		// A new shape of the desired Deployment: Ensure takes over the fields its create
		// left to an update, then applies.
		WantRequests: []string{"patch deployments", "patch deployments", "patch podsets/status"},
		WantObjects:  []client.Object{ownedDeployment(3)},
	}, {
		Name:         "a Deployment of its name that nobody owns is left alone, and the PodSet says why",
		Object:       podSet(2),
		Given:        []client.Object{foreignDeployment(nil)},
		WantRequests: []string{"patch podsets/status"},
		WantObjects:  []client.Object{foreignDeployment(nil)},
		WantStatus:   stalled(notOwned + "has no controller; it is left alone: delete it or rename this PodSet"),
		WantEvents:   []string{"Warning DeploymentNotOwned " + notOwned + "has no controller; it is left alone: delete it or rename this PodSet"},
		WantResult:   rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		Name:   "a Deployment of its name that another object controls is left alone",
		Object: podSet(2),
		Given: []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
			foreignDeployment(controllerRef("v1", "ConfigMap", "other")),
		},
		WantRequests: []string{"patch podsets/status"},
		WantObjects:  []client.Object{foreignDeployment(controllerRef("v1", "ConfigMap", "other"))},
		WantEvents: []string{"Warning DeploymentNotOwned " + notOwned +
			`is controlled by ConfigMap "other"; it is left alone: delete it or rename this PodSet`},
		WantResult: rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		Name:   "a Deployment the API server refuses is retried, with a Warning event at once",
		Object: podSet(2),
		Faults: &reconciletest.Faults{Verbs: []string{"create", "patch"}, Resources: []string{"deployments"}, Rate: 1,
			Code: http.StatusForbidden}, // a quota, an admission policy: a person must act
		WantRequests: []string{"create deployments", "patch podsets/status"},
		WantStatus: appsv1alpha1.PodSetStatus{ObservedGeneration: 0, // a status that failed a generation does not claim it
			Conditions: []metav1.Condition{
				condition("Ready", "False", "Retrying", "fault injected by reconciletest: create deployments"),
				condition("Reconciling", "True", "Retrying", "fault injected by reconciletest: create deployments"),
			}},
		WantEvents: []string{"Warning ReconcileError fault injected by reconciletest: create deployments"},
		WantErr:    "fault injected",
	}}
	table.Run(t)
}

// selector selects the pods of the PodSet web, as its status says for the scale
// subresource.
const selector = "app.kubernetes.io/instance=web,app.kubernetes.io/managed-by=podset-operator,app.kubernetes.io/name=podset"

// notOwned begins what a PodSet says of a Deployment of its name that is not its own.
const notOwned = "Deployment " + reconciletest.CaseNamespace + "/web exists and "

// condition is a condition of generation 1 that changed at the case's time.
func condition(typ, status, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), ObservedGeneration: 1,
		LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow), Reason: reason, Message: message}
}

// stalled is the status of a PodSet that cannot go on because of a Deployment that is
// not its own.
func stalled(message string) appsv1alpha1.PodSetStatus {
	return appsv1alpha1.PodSetStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
		condition("Ready", "False", "DeploymentNotOwned", message),
		condition("Stalled", "True", "DeploymentNotOwned", message),
	}}
}

// podSet is the PodSet the cases reconcile, named web.
func podSet(size int32) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1alpha1.PodSetSpec{Size: size}}
}

// controllerRef is an owner reference that the case completes with the owner's UID.
func controllerRef(apiVersion, kind, name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

// ownedDeployment is the Deployment the PodSet wants, controlled by it.
func ownedDeployment(size int32) *appsv1.Deployment {
	d := controller.Deployment(podSet(size))
	d.OwnerReferences = controllerRef(appsv1alpha1.GroupVersion.String(), "PodSet", "web")
	return d
}

// rolledOut gives the PodSet's Deployment the status of a finished rollout of ready
// replicas, as the Deployment controller would.
func rolledOut(ready int32) func(context.Context, client.Client, string) error {
	return func(ctx context.Context, c client.Client, ns string) error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: 1, Replicas: ready, UpdatedReplicas: ready, ReadyReplicas: ready, AvailableReplicas: ready,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			},
		}
		return c.Status().Update(ctx, d)
	}
}

// resize sets the PodSet's size, as a person would.
func resize(size int32) func(context.Context, client.Client, string) error {
	return func(ctx context.Context, c client.Client, ns string) error {
		ps := &appsv1alpha1.PodSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ps); err != nil {
			return err
		}
		ps.Spec.Size = size
		return c.Update(ctx, ps)
	}
}

// pod is a pod of the PodSet web: its labels, as its Deployment's template sets them.
func pod(name string) *corev1.Pod {
	labels := controller.Deployment(podSet(1)).Spec.Template.Labels
	if name == "someone-elses" {
		labels = map[string]string{"app": "other"}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "busybox", Image: controller.Image}}}, 1001),
	}
}

// foreignDeployment is a Deployment named web that is not the PodSet's.
func foreignDeployment(owners []metav1.OwnerReference) *appsv1.Deployment {
	d := workload.Deployment("", "web", 1, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "someone-elses"}},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	})
	d.OwnerReferences = owners
	return d
}
