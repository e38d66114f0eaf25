package readiness

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
)

// podsIndex is the name of the index IndexPods registers: pods by the workload that made
// them, as workloadKey names it.
const podsIndex = "ownership.reconcilekit.io/workload"

// IndexPods registers in indexer (the manager's field indexer, mgr.GetFieldIndexer()) an
// index of pods by the workload that made them: the Deployment whose ReplicaSet made them,
// or the StatefulSet. Pods and StatefulSetPods read it. Without it, they match the
// workload's selector against every cached pod of the namespace, so a reconcile costs in
// proportion to the pods the namespace holds: with 10000 objects in one namespace, most of
// it.
//
// A manager made from controller declarations (reconcile.Manager) registers it for a
// controller that owns Deployments or StatefulSets and watches pods, once the manager runs:
// the index then joins the pod informer the controller's watch starts, whose cache sync the
// controller bounds, so an operator that may not list pods fails to start with an error.
// Registered before the manager starts, the index would make the manager wait for the pod
// cache with no limit: a missing permission hangs the start, and controller-runtime 0.25
// cannot even stop such a manager. Call it yourself the same way (from a
// manager.RunnableFunc added with mgr.Add) for a manager made otherwise. Until the index is
// registered, Pods and StatefulSetPods fall back to the selector.
func IndexPods(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &corev1.Pod{}, podsIndex, podWorkload)
}

// podWorkload names the workload a pod belongs to. A StatefulSet controls its pods itself.
// The Deployment controller names each of its ReplicaSets after the Deployment and the hash
// of the pod template, and labels the ReplicaSet's pods with that hash.
func podWorkload(pod client.Object) []string {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.APIVersion != appsv1.SchemeGroupVersion.String() {
		return nil
	}
	switch ref.Kind {
	case "StatefulSet":
		return []string{workloadKey("StatefulSet", ref.Name)}
	case "ReplicaSet":
		hash := pod.GetLabels()[appsv1.DefaultDeploymentUniqueLabelKey]
		if name, ok := strings.CutSuffix(ref.Name, "-"+hash); ok && hash != "" {
			return []string{workloadKey("Deployment", name)}
		}
	}
	return nil
}

// workloadKey is a workload's value in IndexPods' index: the kind keeps a Deployment's pods
// apart from those of a StatefulSet of the same name.
func workloadKey(kind, name string) string { return kind + "/" + name }

// Pods lists the pods of a Deployment, from c's cache when c is the manager's client: the
// pods of its ReplicaSets that its selector matches when the cache has IndexPods' index,
// otherwise every pod its selector matches. An operator that uses it should register that
// index and restrict its pod cache to its own pods (a label selector in the manager's cache
// options) rather than cache every pod of the cluster.
func Pods(ctx context.Context, c client.Reader, d *appsv1.Deployment) ([]corev1.Pod, error) {
	return podsOf(ctx, c, "Deployment", d.Namespace, d.Name, d.Spec.Selector)
}

// podsOf lists the pods that selector matches of the workload of kind named name, by
// IndexPods' index when c has it.
func podsOf(ctx context.Context, c client.Reader, kind, namespace, name string, selector *metav1.LabelSelector) ([]corev1.Pod, error) {
	if selector == nil {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", strings.ToLower(kind), namespace, name, err)
	}
	var pods corev1.PodList
	opts := []client.ListOption{client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}}
	err = c.List(ctx, &pods, append(opts, client.MatchingFields{podsIndex: workloadKey(kind, name)})...)
	if err != nil && strings.Contains(err.Error(), podsIndex) {
		// The cache has no such index (or c is no cache): every error that says so names it.
		err = c.List(ctx, &pods, opts...)
	}
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// Rollout is how far a workload, or any object, has rolled out its latest change.
type Rollout string

// The rollout states, after kstatus: Complete is kstatus' Current.
const (
	RolloutComplete   Rollout = "Complete"
	RolloutInProgress Rollout = "InProgress"
	RolloutFailed     Rollout = "Failed"
)

// Reasons the Deployment controller gives its own conditions, which State passes on and
// gives the other workloads too.
const (
	reasonMinimumAvailable   = "MinimumReplicasAvailable"
	reasonMinimumUnavailable = "MinimumReplicasUnavailable"
	reasonDeadlineExceeded   = "ProgressDeadlineExceeded"
)

// ReasonAvailabilityNotReported is State.AvailableReason while the Deployment's status has
// no Available condition, or a DaemonSet's has not counted the pods it wants: its controller
// has not processed it yet (it was just created), or no controller runs.
const ReasonAvailabilityNotReported = "AvailabilityNotReported"

// ReasonServing is State.AvailableReason while a rollout or resize is under way below the
// Deployment's minimum availability but at least one replica serves.
const ReasonServing = "Serving"

// State is a workload's state as an owner reports it: whether it serves (Available) and
// how far its latest change has rolled out (Rollout), each with a reason and message a person
// can act on. The two are independent on purpose: a workload that is being resized, or
// rolled to a new image, keeps serving from the pods it has, so an alert on Available=False
// means an outage, not a change in progress. Deployment, StatefulSet and
// Of make one; an owner may fill one in by hand (a child it cannot own, say).
type State struct {
	// Available says whether the workload serves, by the rule of its kind:
	//   - Deployment: the Deployment controller's Available condition is True (minimum
	//     availability: spec.replicas less maxUnavailable pods available), or a rollout or
	//     resize is in progress with at least one pod available (see Deployment);
	//   - StatefulSet: at least its PodDisruptionBudget's minimum of pods are ready, a
	//     majority of spec.replicas without one (see StatefulSet; Of
	//     knows of no budget);
	//   - ReplicaSet: a majority of spec.replicas ready; DaemonSet: a majority of
	//     status.desiredNumberScheduled ready, once its controller has counted them;
	//   - a workload with no pod wanted (scaled to 0) is available;
	//   - any other kind, by Of: kstatus says Current.
	// It does not depend on the rollout: pods that serve do not stop serving because the
	// spec changed.
	Available bool
	// AvailableReason is CamelCase, usable as a condition reason: MinimumReplicasAvailable
	// or MinimumReplicasUnavailable (for a Deployment the controller's own, ReasonServing
	// or ReasonAvailabilityNotReported). Empty means Reason.
	AvailableReason string
	// AvailableMessage says the same for a person, with the replica counts. Empty means
	// Message.
	AvailableMessage string

	// Rollout is how far the rollout has come, by kstatus' rules.
	Rollout Rollout
	// Reason is CamelCase, usable as a condition reason.
	Reason string
	// Message says the same for a person, with the replica counts.
	Message string
}

// Deployment reads a Deployment's availability and rollout.
//
// Available says that the workload serves, so that an alert on it fires on an outage and
// not on a resize. It is read in this order, even while the controller has not observed the
// latest generation (pods that serve do not stop serving because the spec changed):
//   - the Deployment's own Available condition is True (minimum availability): available,
//     with the condition's reason;
//   - a rollout or resize is in progress and at least one replica is available: available,
//     with reason ReasonServing. The Deployment's own condition turns False on a scale-up
//     of fewer than four replicas (25% of them is no replica at all) while every pod that
//     served still does;
//   - otherwise not available, with the condition's reason, or ReasonAvailabilityNotReported
//     when it has none.
//
// The rollout follows kstatus' rules, in this order:
//   - the controller has not observed the current generation: InProgress;
//   - a Progressing condition with reason ProgressDeadlineExceeded: Failed;
//   - complete once every desired replica (spec.replicas, 1 when unset) is updated, ready
//     and available and no other replica is left (an old one, or one beyond spec.replicas
//     after a resize down): Complete; otherwise InProgress.
//
// Every rollout in progress has the reason RollingOut and a message that counts available
// replicas (and old ones left), so that the owner's status changes as often as the count
// does, not at each step of each replica: a status written from it is rewritten only when
// there is progress to report.
func Deployment(d *appsv1.Deployment) State {
	want := ptr.Deref(d.Spec.Replicas, 1)
	s := d.Status
	counts := fmt.Sprintf("%d of %d replicas available", s.AvailableReplicas, want)
	r := readRollout(d, want, counts)
	r.Available, r.AvailableReason, r.AvailableMessage = availability(s.Conditions, counts)
	if !r.Available && r.Rollout == RolloutInProgress && s.AvailableReplicas > 0 {
		r.Available, r.AvailableReason, r.AvailableMessage = true, ReasonServing, "serving while it rolls out: "+counts
	}
	return r
}

// readRollout applies kstatus' rules; counts is the message's start.
func readRollout(d *appsv1.Deployment, want int32, counts string) State {
	s := d.Status
	observed := d.Generation <= s.ObservedGeneration
	if observed {
		if c := deploymentCondition(s.Conditions, appsv1.DeploymentProgressing); c != nil && c.Reason == reasonDeadlineExceeded {
			msg := c.Message
			if msg == "" {
				msg = "the rollout made no progress within spec.progressDeadlineSeconds"
			}
			return State{Rollout: RolloutFailed, Reason: reasonDeadlineExceeded, Message: msg}
		}
	}
	msg := counts
	// Old replicas, and those beyond the desired count after a resize down, are still there
	// until they terminate.
	if extra := s.Replicas - min(s.UpdatedReplicas, want); extra > 0 {
		msg += fmt.Sprintf(", %d pending termination", extra)
	}
	complete := observed && s.UpdatedReplicas >= want && s.Replicas <= s.UpdatedReplicas && s.Replicas <= want &&
		s.ReadyReplicas >= want && s.AvailableReplicas >= want
	if !complete {
		return State{Rollout: RolloutInProgress, Reason: "RollingOut", Message: msg}
	}
	return State{Rollout: RolloutComplete, Reason: "RolloutComplete", Message: msg}
}

// availability reads the Deployment controller's Available condition. The message is the
// replica counts, not the condition's fixed sentence, so that a person sees how far from
// minimum availability the Deployment is.
func availability(conds []appsv1.DeploymentCondition, counts string) (bool, string, string) {
	c := deploymentCondition(conds, appsv1.DeploymentAvailable)
	switch {
	case c == nil:
		return false, ReasonAvailabilityNotReported,
			"the Deployment controller has not reported availability (no Available condition); " + counts
	case c.Status == corev1.ConditionTrue:
		return true, cmp.Or(c.Reason, reasonMinimumAvailable), "minimum availability: " + counts
	default:
		return false, cmp.Or(c.Reason, reasonMinimumUnavailable), "below minimum availability: " + counts
	}
}

func deploymentCondition(conds []appsv1.DeploymentCondition, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// Mark records r in obj's Available, Progressing and Degraded conditions and reports whether
// any changed. The rules:
//   - Available is True when r.Available and False otherwise, with r.AvailableReason and
//     r.AvailableMessage (r.Reason and r.Message where those are empty). It keeps
//     State.Available's meaning: the workload serves, whatever rollout is under way.
//   - Progressing is True when r.Rollout is InProgress (a new generation is rolling out,
//     including a resize), False when it is Complete or Failed.
//   - Degraded is True when r.Rollout is Failed (the rollout exceeded its progress deadline,
//     or whatever a hand-built State reports), False otherwise.
//   - Progressing and Degraded carry r.Reason and r.Message.
//   - Transition times, observedGeneration and reason validation follow conditions.Set.
//
// So a Deployment resized while it serves is Available=True and Progressing=True; one whose
// new image never becomes ready is Degraded=True, and still Available=True while its old
// pods keep minimum availability.
func (r State) Mark(obj conditions.Setter) bool {
	set := func(typ string, on bool, reason, msg string) bool {
		if on {
			return conditions.MarkTrue(obj, typ, reason, "%s", msg)
		}
		return conditions.MarkFalse(obj, typ, reason, "%s", msg)
	}
	a := set(conditions.Available, r.Available, cmp.Or(r.AvailableReason, r.Reason), cmp.Or(r.AvailableMessage, r.Message))
	p := set(conditions.Progressing, r.Rollout == RolloutInProgress, r.Reason, r.Message)
	d := set(conditions.Degraded, r.Rollout == RolloutFailed, r.Reason, r.Message)
	return a || p || d
}
