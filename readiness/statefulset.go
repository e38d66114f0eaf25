package readiness

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatefulSetScale returns the Scale of s, for an owner's scale subresource. A selector that
// cannot be converted gives an empty Selector, as for DeploymentScale.
func StatefulSetScale(s *appsv1.StatefulSet) Scale {
	return scaleOf(s.Status.Replicas, s.Status.ReadyReplicas, s.Spec.Selector)
}

// StatefulSetPods lists the pods of a StatefulSet, from c's cache when c is the manager's
// client: the pods it controls that its selector matches when the cache has IndexPods'
// index, otherwise every pod its selector matches. See Pods for the cache to give it.
func StatefulSetPods(ctx context.Context, c client.Reader, s *appsv1.StatefulSet) ([]corev1.Pod, error) {
	return podsOf(ctx, c, "StatefulSet", s.Namespace, s.Name, s.Spec.Selector)
}

// StatefulSet reads a StatefulSet's availability and rollout; pdb is the
// PodDisruptionBudget that protects its pods, or nil.
//
// Available says that the workload serves, through a rolling update too, so that an alert
// on it fires on an outage and not on a change: it is true while at least the minimum of
// ready pods serve, whatever rollout is under way. The minimum is
//   - with pdb, what it keeps: spec.minAvailable, or spec.replicas less
//     spec.maxUnavailable, a percentage of spec.replicas rounded up as the disruption
//     controller does; at least 1 and at most spec.replicas;
//   - without, a majority (a quorum) of spec.replicas: 2 of 3, 3 of 5;
//   - 0 for a StatefulSet scaled to 0, which is available, as a Deployment of 0 is.
//
// A rolling update takes down one pod at a time, so a StatefulSet of 3 stays available
// through it, even one stuck on a new pod that never becomes ready; it is not available
// once a second pod fails meanwhile. The reason is MinimumReplicasAvailable or
// MinimumReplicasUnavailable, the message counts ready replicas and names the minimum.
//
// The rollout follows kstatus' rules, in this order:
//   - the controller has not observed the current generation: InProgress;
//   - updateStrategy OnDelete (pods change only when someone deletes them): Complete;
//   - fewer replicas than spec.replicas (1 when unset), fewer ready, or more (a resize
//     down, pods not yet terminated): InProgress;
//   - with a rollingUpdate partition (the API server sets 0), fewer updated replicas than
//     those at or above it: InProgress, otherwise Complete;
//   - fewer current replicas than desired, or the current revision not yet the update
//     revision: InProgress;
//   - otherwise: Complete.
//
// As with Deployment, every rollout in progress has the reason RollingOut and a
// message that counts, so that a status written from it changes when a count does.
func StatefulSet(s *appsv1.StatefulSet, pdb *policyv1.PodDisruptionBudget) State {
	want := ptr.Deref(s.Spec.Replicas, 1)
	r := statefulSetRollout(s, want)
	need, rule := minimumServing(want, pdb)
	r.Available, r.AvailableReason, r.AvailableMessage = serving(s.Status.ReadyReplicas, want, need, rule)
	return r
}

// statefulSetRollout applies kstatus' rules for StatefulSets.
func statefulSetRollout(s *appsv1.StatefulSet, want int32) State {
	st := s.Status
	strategy := s.Spec.UpdateStrategy
	// A partition holds the pods below it back: only those at or above it are to update.
	target := want
	if u := strategy.RollingUpdate; u != nil && u.Partition != nil {
		target = max(want-*u.Partition, 0)
	}
	msg := fmt.Sprintf("%d of %d replicas ready", st.ReadyReplicas, want)
	if outdated := target - st.UpdatedReplicas; outdated > 0 {
		msg += fmt.Sprintf(", %d to update", outdated)
	}
	if extra := st.Replicas - want; extra > 0 {
		msg += fmt.Sprintf(", %d pending termination", extra)
	}
	inProgress := State{Rollout: RolloutInProgress, Reason: "RollingOut", Message: msg}
	complete := State{Rollout: RolloutComplete, Reason: "RolloutComplete", Message: msg}
	switch {
	case s.Generation > st.ObservedGeneration:
		return inProgress
	case strategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
		return complete
	case st.Replicas < want || st.ReadyReplicas < want || st.Replicas > want:
		return inProgress
	case strategy.RollingUpdate != nil && strategy.RollingUpdate.Partition != nil:
		if st.UpdatedReplicas < target {
			return inProgress
		}
		return complete
	case st.CurrentReplicas < want || st.CurrentRevision != st.UpdateRevision:
		return inProgress
	}
	return complete
}

// minimumServing is how many of want pods must be ready for a workload to serve, by pdb
// when there is one and a majority otherwise, with the rule in words.
func minimumServing(want int32, pdb *policyv1.PodDisruptionBudget) (int32, string) {
	if want <= 0 {
		return 0, "none wanted"
	}
	if pdb == nil || pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable == nil {
		return want/2 + 1, "a majority"
	}
	need, rule := want, "the PodDisruptionBudget's"
	if m := pdb.Spec.MinAvailable; m != nil {
		if n, err := intstr.GetScaledValueFromIntOrPercent(m, int(want), true); err == nil {
			need, rule = int32(n), fmt.Sprintf("%s minAvailable %s", rule, m)
		}
	} else if m := pdb.Spec.MaxUnavailable; m != nil {
		if n, err := intstr.GetScaledValueFromIntOrPercent(m, int(want), true); err == nil {
			need, rule = want-int32(n), fmt.Sprintf("%s maxUnavailable %s", rule, m)
		}
	}
	// A budget that allows every pod to go still needs one to serve; one that asks for more
	// than there are cannot mean that every pod ready is not enough.
	return min(max(need, 1), want), rule
}

// serving says whether ready of want pods serve, with need of them needed by rule.
func serving(ready, want, need int32, rule string) (bool, string, string) {
	counts := fmt.Sprintf("%d of %d replicas ready, %d needed (%s)", ready, want, need, rule)
	if ready >= need {
		return true, reasonMinimumAvailable, "minimum availability: " + counts
	}
	return false, reasonMinimumUnavailable, "below minimum availability: " + counts
}
