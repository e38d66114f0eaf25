package readiness

import (
	"strings"
	"testing"

	"github.com/reconcilekit/reconcilekit/workload"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rolling is a StatefulSet of replicas as the API server defaults it (RollingUpdate, partition
// 0), at generation 2, observed, whose status has ready pods, updated ones on the update
// revision and the others on the current one.
func rolling(replicas, ready, updated int32) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 2},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)},
		}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready,
			UpdatedReplicas: updated, CurrentReplicas: replicas - updated, CurrentRevision: "db-1", UpdateRevision: "db-2"},
	}
	if updated == replicas {
		s.Status.CurrentReplicas, s.Status.CurrentRevision = replicas, "db-2"
	}
	return s
}

func budget(minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable}}
}

func TestStatefulSetAvailabilityMeansServing(t *testing.T) {
	two, pct60, one := intstr.FromInt32(2), intstr.FromString("60%"), intstr.FromInt32(1)
	zero, nine, all := intstr.FromInt32(0), intstr.FromInt32(9), intstr.FromString("100%")
	tests := []struct {
		name      string
		s         *appsv1.StatefulSet
		pdb       *policyv1.PodDisruptionBudget
		available bool
		message   string // a substring of AvailableMessage
	}{
		{"a rolling update with a majority ready serves", rolling(3, 2, 1), nil, true, "2 of 3 replicas ready, 2 needed (a majority)"},
		{"a rolling update with a minority ready does not serve", rolling(3, 1, 1), nil, false, "1 of 3 replicas ready, 2 needed (a majority)"},
		{"a majority of an even number is more than half", rolling(4, 2, 1), nil, false, "3 needed"},
		{"a single replica must be ready", rolling(1, 0, 1), nil, false, "1 needed"},
		{"a budget's minAvailable is the minimum", rolling(5, 2, 1), budget(&two, nil), true, "2 needed (the PodDisruptionBudget's minAvailable 2)"},
		{"a budget's minAvailable above the majority is the minimum too", rolling(3, 2, 1), budget(ptr.To(intstr.FromInt32(3)), nil), false, "3 needed"},
		{"a budget's percentage rounds up, as the disruption controller's", rolling(5, 2, 1), budget(&pct60, nil), false, "3 needed (the PodDisruptionBudget's minAvailable 60%)"},
		{"a budget's maxUnavailable leaves the rest", rolling(5, 4, 1), budget(nil, &one), true, "4 needed (the PodDisruptionBudget's maxUnavailable 1)"},
		{"a budget that lets every pod go still needs one to serve", rolling(3, 0, 1), budget(&zero, nil), false, "1 needed"},
		{"a budget of 100% unavailable still needs one to serve", rolling(3, 1, 1), budget(nil, &all), true, "1 needed"},
		{"a budget asking more pods than there are is met by all of them", rolling(3, 3, 3), budget(&nine, nil), true, "3 needed"},
		{"a budget with neither field is a majority", rolling(3, 2, 1), budget(nil, nil), true, "a majority"},
		{"a statefulset scaled to zero serves all it is asked to", rolling(0, 0, 0), nil, true, "0 needed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StatefulSet(tt.s, tt.pdb)
			reason := map[bool]string{true: "MinimumReplicasAvailable", false: "MinimumReplicasUnavailable"}[tt.available]
			if got.Available != tt.available || got.AvailableReason != reason || !strings.Contains(got.AvailableMessage, tt.message) {
				t.Errorf("availability = %v %s %q, want %v %s with a message containing %q",
					got.Available, got.AvailableReason, got.AvailableMessage, tt.available, reason, tt.message)
			}
		})
	}
}

// StatefulSet' rollout is written by hand for speed; kstatus is its oracle. Each
// status is one the StatefulSet controller writes, or a spec it is given.
func TestStatefulSetRolloutAgreesWithKstatus(t *testing.T) {
	with := func(s *appsv1.StatefulSet, change func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
		change(s)
		return s
	}
	tests := []struct {
		name    string
		s       *appsv1.StatefulSet
		want    Rollout
		message string // a substring of Message
	}{
		{"just created, not observed", with(rolling(3, 0, 0), func(s *appsv1.StatefulSet) { s.Status = appsv1.StatefulSetStatus{} }), RolloutInProgress, "0 of 3 replicas ready"},
		{"pods starting", with(rolling(3, 1, 3), func(s *appsv1.StatefulSet) { s.Status.Replicas = 2 }), RolloutInProgress, "1 of 3 replicas ready"},
		{"rolled out", rolling(3, 3, 3), RolloutComplete, "3 of 3 replicas ready"},
		{"a new template, not observed", with(rolling(3, 3, 3), func(s *appsv1.StatefulSet) { s.Generation = 3 }), RolloutInProgress, "3 of 3"},
		{"a new template, one pod replaced and not ready", rolling(3, 2, 1), RolloutInProgress, "2 of 3 replicas ready, 2 to update"},
		{"a new template, two pods updated and ready", rolling(3, 3, 2), RolloutInProgress, "1 to update"},
		{"a new template rolled out", rolling(3, 3, 3), RolloutComplete, "3 of 3"},
		{"resized down, a pod terminating", with(rolling(2, 2, 2), func(s *appsv1.StatefulSet) { s.Status.Replicas = 3 }), RolloutInProgress, "1 pending termination"},
		{"a partition holding back the first pod, the others updated", with(rolling(3, 3, 2), func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](1)
		}), RolloutComplete, "3 of 3 replicas ready"},
		{"a partition, pods above it not yet updated", with(rolling(3, 3, 1), func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](1)
		}), RolloutInProgress, "1 to update"},
		{"no partition, on an old revision", with(rolling(3, 3, 3), func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate = nil
			s.Status.CurrentRevision = "db-1"
		}), RolloutInProgress, "3 of 3"},
		{"no partition, pods not current", with(rolling(3, 3, 3), func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate = nil
			s.Status.CurrentReplicas = 2
		}), RolloutInProgress, "3 of 3"},
		{"OnDelete, pods on an old revision", with(rolling(3, 1, 1), func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}), RolloutComplete, "1 of 3"},
	}
	kstatusRollout := map[status.Status]Rollout{
		status.CurrentStatus: RolloutComplete, status.InProgressStatus: RolloutInProgress, status.FailedStatus: RolloutFailed,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StatefulSet(tt.s, nil)
			if got.Rollout != tt.want || !strings.Contains(got.Message, tt.message) {
				t.Errorf("rollout = %s %q, want %s with a message containing %q", got.Rollout, got.Message, tt.want, tt.message)
			}
			if k := kstatusRollout[kstatusStatus(t, tt.s, "StatefulSet")]; k != got.Rollout {
				t.Errorf("rollout = %s, kstatus says %s", got.Rollout, k)
			}
			wantReason := map[Rollout]string{RolloutComplete: "RolloutComplete", RolloutInProgress: "RollingOut"}[got.Rollout]
			if got.Reason != wantReason {
				t.Errorf("reason = %s, want %s", got.Reason, wantReason)
			}
		})
	}
}

// kstatusStatus is kstatus' verdict on obj, of kind in group apps.
func kstatusStatus(t testing.TB, obj client.Object, kind string) status.Status {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(kind))
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

func TestReadinessOfKeepsAvailableMeaningServingForEveryWorkload(t *testing.T) {
	replicaSet := func(want, ready int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Generation: 1}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(want)},
			Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: want, ReadyReplicas: ready, AvailableReplicas: ready, FullyLabeledReplicas: want}}
	}
	tests := []struct {
		name      string
		kind      string
		obj       client.Object
		available bool
		reason    string
	}{
		{"a statefulset rolling out with a majority ready serves", "StatefulSet", rolling(3, 2, 1), true, "MinimumReplicasAvailable"},
		{"a statefulset rolling out with a minority ready does not", "StatefulSet", rolling(3, 1, 1), false, "MinimumReplicasUnavailable"},
		{"a replicaset with a majority ready serves", "ReplicaSet", replicaSet(3, 2), true, "MinimumReplicasAvailable"},
		{"a replicaset with a minority ready does not", "ReplicaSet", replicaSet(3, 1), false, "MinimumReplicasUnavailable"},
		{"a daemonset with a majority ready serves", "DaemonSet", daemonSet(3, 2), true, "MinimumReplicasAvailable"},
		{"a deployment resized while a pod serves serves", "Deployment", deployment(func(d *appsv1.Deployment) {
			d.Generation = 2
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1,
				Conditions: []appsv1.DeploymentCondition{minimumUnavailable}}
		}), true, ReasonServing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: content}
			u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(tt.kind))
			for form, obj := range map[string]client.Object{"typed": tt.obj, "unstructured": u} {
				got, err := Of(obj)
				if err != nil {
					t.Fatal(err)
				}
				if got.Rollout != RolloutInProgress || got.Reason != ReasonInProgress || got.Available != tt.available || got.AvailableReason != tt.reason || got.AvailableMessage == "" {
					t.Errorf("%s: Of = %+v, want kstatus' InProgress, available %v with reason %s and a message",
						form, got, tt.available, tt.reason)
				}
			}
		})
	}
}

func TestStatefulSetScaleReportsPodsAndTheirSelector(t *testing.T) {
	s := workload.StatefulSet("ns", "db", 3, corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"b": "2", "a": "1"}}})
	s.Status = appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2}
	if got, want := StatefulSetScale(s), (Scale{Replicas: 3, ReadyReplicas: 2, Selector: "a=1,b=2"}); got != want {
		t.Errorf("StatefulSetScale = %+v, want %+v", got, want)
	}
}

func TestReadinessChangedLetsAStatefulSetsReadyPodsThrough(t *testing.T) {
	with := func(s *appsv1.StatefulSet, change func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
		change(s)
		return s
	}
	tests := []struct {
		name         string
		old, updated *appsv1.StatefulSet
		changed      bool
	}{
		// An owner's budget may draw the line of availability at any count.
		{"a pod becomes ready", rolling(3, 1, 1), rolling(3, 2, 1), true},
		{"the rollout completes", rolling(3, 3, 2), rolling(3, 3, 3), true},
		{"another count changes while the rollout goes on", rolling(3, 2, 1),
			with(rolling(3, 2, 1), func(s *appsv1.StatefulSet) { s.Status.CurrentReplicas-- }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Changed(tt.old, tt.updated); got != tt.changed {
				t.Errorf("Changed = %t, want %t", got, tt.changed)
			}
		})
	}
}
