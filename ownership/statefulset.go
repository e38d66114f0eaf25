package ownership

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatefulSet returns the desired StatefulSet for an owner: name and namespace from the
// arguments, the given replicas, pods from template whose labels double as the selector, and
// a claim of each of claims for every pod (ClaimTemplate makes one), which a container of
// template mounts by the claim's name. Its pods are named after the headless Service of the
// same name (spec.serviceName), which the owner ensures beside it (HeadlessService).
//
// Pass it to Ensure, which keeps spec.replicas at replicas and rolls the pods when the
// template changes. The API server refuses to change the claim templates, the selector, the
// serviceName and the podManagementPolicy once the StatefulSet exists: Ensure leaves
// differing claim templates as they are and reports them with an *ImmutableError (see
// Ensure), so choose the others, which derive from the name and the template's labels, once.
func StatefulSet(namespace, name string, replicas int32, template corev1.PodTemplateSpec, claims ...corev1.PersistentVolumeClaim) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: template.Labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:             ptr.To(replicas),
			ServiceName:          name,
			Selector:             &metav1.LabelSelector{MatchLabels: template.Labels},
			Template:             template,
			VolumeClaimTemplates: claims,
		},
	}
}

// HeadlessService returns the desired headless Service that names the pods of the
// StatefulSet of the same name, selected by labels (its pod template's): pod db-0 is
// db-0.db.<namespace>.svc. It publishes pods before they are ready, for the members of a
// cluster to find each other while they form it; clients reach the ready pods through a
// Service of their own.
func HeadlessService(namespace, name string, labels map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 labels,
			Ports:                    ports,
			PublishNotReadyAddresses: true,
		},
	}
}

// ClaimTemplate returns a volume claim template for StatefulSet: each pod gets a claim of
// storage, mounted by one node at a time (ReadWriteOnce), of the cluster's default
// StorageClass. Set Spec.StorageClassName on the result for another.
func ClaimTemplate(name string, storage resource.Quantity) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: storage}},
		},
	}
}

// PodDisruptionBudget returns the desired PodDisruptionBudget that keeps at least
// minAvailable (a number, or a percentage of the workload's replicas) of the pods labels
// selects running through voluntary disruptions such as a node drain; labels are those of a
// workload's pod template. Pass the live one Ensure returns to StatefulSetReadiness, so that
// the owner's Available means what the budget protects.
//
// Pods that are not ready may always be evicted (unhealthyPodEvictionPolicy AlwaysAllow):
// they serve nothing the budget could protect, and with the default a single pod that never
// becomes ready would block every drain of its node.
func PodDisruptionBudget(namespace, name string, minAvailable intstr.IntOrString, labels map[string]string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable:               &minAvailable,
			Selector:                   &metav1.LabelSelector{MatchLabels: labels},
			UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow),
		},
	}
}

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

// StatefulSetReadiness reads a StatefulSet's availability and rollout; pdb is the
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
// As with DeploymentReadiness, every rollout in progress has the reason RollingOut and a
// message that counts, so that a status written from it changes when a count does.
func StatefulSetReadiness(s *appsv1.StatefulSet, pdb *policyv1.PodDisruptionBudget) Readiness {
	want := ptr.Deref(s.Spec.Replicas, 1)
	r := statefulSetRollout(s, want)
	need, rule := minimumServing(want, pdb)
	r.Available, r.AvailableReason, r.AvailableMessage = serving(s.Status.ReadyReplicas, want, need, rule)
	return r
}

// statefulSetRollout applies kstatus' rules for StatefulSets.
func statefulSetRollout(s *appsv1.StatefulSet, want int32) Readiness {
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
	inProgress := Readiness{Rollout: RolloutInProgress, Reason: "RollingOut", Message: msg}
	complete := Readiness{Rollout: RolloutComplete, Reason: "RolloutComplete", Message: msg}
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
