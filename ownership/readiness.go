package ownership

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/conditions"
)

// The reasons ReadinessOf gives, after kstatus' statuses. A failure has the reason kstatus
// found (JobFailed, ProgressDeadlineExceeded, a Stalled condition's), ReasonFailed when it
// found none or one that is not a valid condition reason.
const (
	ReasonCurrent     = "Current"
	ReasonInProgress  = "InProgress"
	ReasonTerminating = "Terminating"
	ReasonFailed      = "Failed"
)

// ReadinessOf reads the readiness of any object by kstatus' rules
// (sigs.k8s.io/cli-utils/pkg/kstatus/status), the ones Flux, Argo CD and kubectl wait users
// rely on, maintained by the people who define each kind: for StatefulSets, DaemonSets,
// ReplicaSets, Jobs, Pods, PersistentVolumeClaims, Services, PodDisruptionBudgets,
// CustomResourceDefinitions and Deployments their own rules, for every other object the
// generic ones (metadata.generation observed, then the Reconciling, Stalled and Ready
// conditions; an object with none of them is current).
//
// kstatus' status becomes the Rollout, with its message:
//   - Current: RolloutComplete, reason ReasonCurrent, and Available;
//   - InProgress: RolloutInProgress, reason ReasonInProgress, not Available;
//   - Terminating (the object has a deletionTimestamp): RolloutInProgress, reason
//     ReasonTerminating, not Available;
//   - Failed: RolloutFailed, with the reason kstatus gives (ReasonFailed when it gives none,
//     or one a condition cannot carry), not Available.
//
// AvailableReason and AvailableMessage are left empty, so that Mark uses Reason and Message.
// Unlike DeploymentReadiness, which keeps one reason and a replica count through a whole
// rollout, kstatus' messages name each step ("Ready: 1/3", "Updated: 2/3"): an owner that
// marks its conditions from them writes its status at each step.
//
// obj may be typed or unstructured. Its kind is taken from its apiVersion and kind, or,
// when those are empty as in objects a typed client returns, from client-go's scheme of the
// built-in kinds; a typed object of any other kind gets the generic rules. The object is
// converted to unstructured on every call: for an owned Deployment on a hot path,
// DeploymentReadiness is faster and allocates nothing.
func ReadinessOf(obj client.Object) (Readiness, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return Readiness{}, err
	}
	res, err := status.Compute(u)
	if err != nil {
		return Readiness{}, fmt.Errorf("reading the status of %s %s/%s: %w", u.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	if res.Message == "" { // a condition without one: a person still needs a sentence
		res.Message = fmt.Sprintf("%s by kstatus' rules", res.Status)
	}
	switch res.Status {
	case status.CurrentStatus:
		return Readiness{Available: true, Rollout: RolloutComplete, Reason: ReasonCurrent, Message: res.Message}, nil
	case status.FailedStatus:
		reason := ReasonFailed
		for _, c := range res.Conditions {
			// A custom kind's condition may give any reason; Mark must be able to write it.
			if c.Type == status.ConditionStalled && conditions.ValidateReason(c.Reason) == nil {
				reason = c.Reason
			}
		}
		return Readiness{Rollout: RolloutFailed, Reason: reason, Message: res.Message}, nil
	case status.TerminatingStatus:
		return Readiness{Rollout: RolloutInProgress, Reason: ReasonTerminating, Message: res.Message}, nil
	default: // InProgress; Compute reports no other status
		return Readiness{Rollout: RolloutInProgress, Reason: ReasonInProgress, Message: res.Message}, nil
	}
}

// toUnstructured converts obj for kstatus, with its kind set: kstatus picks the rules of a
// built-in kind by its group and kind.
func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: content}
	if u.GetKind() == "" {
		if gvk, err := apiutil.GVKForObject(obj, scheme.Scheme); err == nil {
			u.SetGroupVersionKind(gvk)
		}
	}
	return u, nil
}

// ReadinessChanged reports whether an update changed what an owner reports of its child:
// by kstatus' rules, whether the child is available and how far it has rolled out. The
// reconcile shell lets such an update through at once and coalesces the others. It is quick
// for the kinds an owner's status follows closely (a Deployment's rollout, a pod's phase and
// readiness), and reads any other kind with ReadinessOf.
func ReadinessChanged(old, updated client.Object) bool {
	switch n := updated.(type) {
	case *appsv1.Deployment:
		o, ok := old.(*appsv1.Deployment)
		if !ok {
			return true
		}
		a, b := DeploymentReadiness(o), DeploymentReadiness(n)
		return a.Rollout != b.Rollout || a.Available != b.Available
	case *corev1.Pod:
		o, ok := old.(*corev1.Pod)
		return !ok || o.Status.Phase != n.Status.Phase || podReady(o) != podReady(n)
	}
	a, errA := ReadinessOf(old)
	b, errB := ReadinessOf(updated)
	return errA != nil || errB != nil || a.Rollout != b.Rollout || a.Available != b.Available
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
