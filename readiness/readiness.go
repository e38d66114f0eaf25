package readiness

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/conditions"
)

// The reasons Of gives, after kstatus' statuses. A failure has the reason kstatus
// found (JobFailed, ProgressDeadlineExceeded, a Stalled condition's), ReasonFailed when it
// found none or one that is not a valid condition reason.
const (
	ReasonCurrent     = "Current"
	ReasonInProgress  = "InProgress"
	ReasonTerminating = "Terminating"
	ReasonFailed      = "Failed"
)

// Of reads the readiness of any object by kstatus' rules
// (sigs.k8s.io/cli-utils/pkg/kstatus/status), the ones Flux, Argo CD and kubectl wait users
// rely on, maintained by the people who define each kind: for StatefulSets, DaemonSets,
// ReplicaSets, Jobs, Pods, PersistentVolumeClaims, Services, PodDisruptionBudgets,
// CustomResourceDefinitions and Deployments their own rules, for every other object the
// generic ones (metadata.generation observed, then the Reconciling, Stalled and Ready
// conditions; an object with none of them is current).
//
// kstatus' status becomes the Rollout, with its message:
//   - Current: RolloutComplete, reason ReasonCurrent;
//   - InProgress: RolloutInProgress, reason ReasonInProgress;
//   - Terminating (the object has a deletionTimestamp): RolloutInProgress, reason
//     ReasonTerminating;
//   - Failed: RolloutFailed, with the reason kstatus gives (ReasonFailed when it gives none,
//     or one a condition cannot carry).
//
// Available keeps its meaning, serving, whatever the rollout: for a Deployment, a
// StatefulSet, a DaemonSet or a ReplicaSet it follows the rule of its kind in
// State.Available (a StatefulSet's majority, as Of knows of no
// PodDisruptionBudget), with AvailableReason and AvailableMessage; so a StatefulSet that
// rolls out while a majority of its pods are ready is InProgress and Available. For any
// other kind it is kstatus' Current, and AvailableReason and AvailableMessage are left
// empty, so that Mark uses Reason and Message.
//
// Unlike Deployment and StatefulSet, which keep one reason and a replica
// count through a whole rollout, kstatus' messages name each step ("Ready: 1/3", "Updated:
// 2/3"): an owner that marks its conditions from them writes its status at each step.
//
// obj may be typed or unstructured. Its kind is taken from its apiVersion and kind, or,
// when those are empty as in objects a typed client returns, from client-go's scheme of the
// built-in kinds; a typed object of any other kind gets the generic rules. The object is
// converted to unstructured on every call: for an owned Deployment or StatefulSet on a hot
// path, Deployment and StatefulSet are faster and allocate little.
func Of(obj client.Object) (State, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return State{}, err
	}
	res, err := status.Compute(u)
	if err != nil {
		return State{}, fmt.Errorf("reading the status of %s %s/%s: %w", u.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	r := fromKstatus(res)
	serves, ok, err := workloadServing(u)
	if err != nil {
		return State{}, fmt.Errorf("reading the status of %s %s/%s: %w", u.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	if ok {
		r.Available, r.AvailableReason, r.AvailableMessage = serves.Available, serves.AvailableReason, serves.AvailableMessage
	}
	return r, nil
}

// fromKstatus maps kstatus' result to a State, Available when Current.
func fromKstatus(res *status.Result) State {
	if res.Message == "" { // a condition without one: a person still needs a sentence
		res.Message = fmt.Sprintf("%s by kstatus' rules", res.Status)
	}
	switch res.Status {
	case status.CurrentStatus:
		return State{Available: true, Rollout: RolloutComplete, Reason: ReasonCurrent, Message: res.Message}
	case status.FailedStatus:
		reason := ReasonFailed
		for _, c := range res.Conditions {
			// A custom kind's condition may give any reason; Mark must be able to write it.
			if c.Type == status.ConditionStalled && conditions.ValidateReason(c.Reason) == nil {
				reason = c.Reason
			}
		}
		return State{Rollout: RolloutFailed, Reason: reason, Message: res.Message}
	case status.TerminatingStatus:
		return State{Rollout: RolloutInProgress, Reason: ReasonTerminating, Message: res.Message}
	default: // InProgress; Compute reports no other status
		return State{Rollout: RolloutInProgress, Reason: ReasonInProgress, Message: res.Message}
	}
}

// workloads are the kinds whose Available says that they serve, by the rule of each kind
// (see State.Available), rather than that kstatus says Current.
var workloads = map[schema.GroupKind]func() client.Object{
	{Group: appsv1.GroupName, Kind: "Deployment"}:  func() client.Object { return &appsv1.Deployment{} },
	{Group: appsv1.GroupName, Kind: "StatefulSet"}: func() client.Object { return &appsv1.StatefulSet{} },
	{Group: appsv1.GroupName, Kind: "DaemonSet"}:   func() client.Object { return &appsv1.DaemonSet{} },
	{Group: appsv1.GroupName, Kind: "ReplicaSet"}:  func() client.Object { return &appsv1.ReplicaSet{} },
}

// workloadServing reads whether the workload u serves; ok is false for other kinds.
func workloadServing(u *unstructured.Unstructured) (r State, ok bool, err error) {
	newObj, ok := workloads[u.GroupVersionKind().GroupKind()]
	if !ok {
		return State{}, false, nil
	}
	obj := newObj()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return State{}, false, err
	}
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return Deployment(w), true, nil
	case *appsv1.StatefulSet:
		return StatefulSet(w, nil), true, nil
	case *appsv1.ReplicaSet:
		return majorityServing(ptr.Deref(w.Spec.Replicas, 1), w.Status.ReadyReplicas), true, nil
	case *appsv1.DaemonSet:
		if w.Status.ObservedGeneration == 0 {
			// Its controller counts the pods it wants, one a node; until then 0 means nothing.
			return State{AvailableReason: ReasonAvailabilityNotReported,
				AvailableMessage: "the DaemonSet controller has not counted the pods it wants yet"}, true, nil
		}
		return majorityServing(w.Status.DesiredNumberScheduled, w.Status.NumberReady), true, nil
	}
	return State{}, false, nil
}

// majorityServing is the availability of a workload of which ready of want pods are ready,
// with no budget of its own.
func majorityServing(want, ready int32) State {
	need, rule := minimumServing(want, nil)
	var r State
	r.Available, r.AvailableReason, r.AvailableMessage = serving(ready, want, need, rule)
	return r
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

// Changed reports whether an update changed what an owner reports of its child:
// by kstatus' rules, whether the child is available and how far it has rolled out. The
// reconcile shell lets such an update through at once and coalesces the others. It is quick
// for the kinds an owner's status follows closely (a Deployment's or a StatefulSet's rollout
// and ready pods, a pod's phase and readiness), and reads any other kind with Of.
func Changed(old, updated client.Object) bool {
	switch n := updated.(type) {
	case *appsv1.Deployment:
		o, ok := old.(*appsv1.Deployment)
		if !ok {
			return true
		}
		a, b := Deployment(o), Deployment(n)
		return a.Rollout != b.Rollout || a.Available != b.Available
	case *appsv1.StatefulSet:
		// Compared by count too: the owner's PodDisruptionBudget, which this cannot see,
		// may draw the line of availability at any count.
		o, ok := old.(*appsv1.StatefulSet)
		if !ok {
			return true
		}
		a, b := StatefulSet(o, nil), StatefulSet(n, nil)
		return a.Rollout != b.Rollout || o.Status.ReadyReplicas != n.Status.ReadyReplicas
	case *corev1.Pod:
		o, ok := old.(*corev1.Pod)
		return !ok || o.Status.Phase != n.Status.Phase || podReady(o) != podReady(n)
	}
	a, errA := Of(old)
	b, errB := Of(updated)
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
