package child

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// StatefulSetReplicas is the StatefulSet's desired replicas, 1 when unset.
func StatefulSetReplicas(s *appsv1.StatefulSet) int32 {
	if s.Spec.Replicas != nil {
		return *s.Spec.Replicas
	}
	return 1
}

// StatefulSetRolledOut says a StatefulSet has rolled out its current generation, by the
// rules kstatus reads a StatefulSet with: observed, as many replicas as wanted and every
// one ready, and every one at the update revision (those at or above a partition, with
// one); a StatefulSet updated OnDelete has rolled out once observed.
func StatefulSetRolledOut(s *appsv1.StatefulSet) bool {
	want, st := StatefulSetReplicas(s), s.Status
	switch {
	case s.Generation > st.ObservedGeneration:
		return false
	case s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
		return true
	case st.Replicas != want || st.ReadyReplicas < want:
		return false
	}
	if u := s.Spec.UpdateStrategy.RollingUpdate; u != nil && u.Partition != nil {
		return st.UpdatedReplicas >= max(want-*u.Partition, 0)
	}
	return st.CurrentReplicas >= want && st.CurrentRevision == st.UpdateRevision
}

// StatefulSetServing says whether enough of a StatefulSet's servers are ready for it to
// serve: the PodDisruptionBudget pdb's minAvailable of them (a number, or a percentage of
// the desired replicas rounded up), at least one and at most all; a majority without one.
// A StatefulSet scaled to 0 serves. The message counts them, for a condition.
func StatefulSetServing(s *appsv1.StatefulSet, pdb *policyv1.PodDisruptionBudget) (bool, string) {
	want, ready := StatefulSetReplicas(s), s.Status.ReadyReplicas
	need := want/2 + 1
	if pdb != nil && pdb.Spec.MinAvailable != nil {
		if n, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(want), true); err == nil {
			need = int32(n)
		}
	}
	need = min(max(need, 1), want)
	return ready >= need, fmt.Sprintf("%d of %d replicas ready, %d needed", ready, want, need)
}

// StatefulSetSelector is the StatefulSet's label selector as the scale subresource
// reports it.
func StatefulSetSelector(s *appsv1.StatefulSet) string {
	if s.Spec.Selector == nil {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(s.Spec.Selector)
	if err != nil {
		return ""
	}
	return sel.String()
}
