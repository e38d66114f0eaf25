package ownership

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/conditions"
)

func TestDeploymentReadiness(t *testing.T) {
	rolled := func(d *appsv1.Deployment) {
		d.Generation = 2
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	}
	tests := []struct {
		name   string
		d      *appsv1.Deployment
		want   Rollout
		reason string
	}{
		{"a rolled out deployment is complete", deployment(rolled), RolloutComplete, "RolloutComplete"},
		{"an unobserved generation is in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Generation = 3 }), RolloutInProgress, "RollingOut"},
		{"an unobserved generation has not failed yet", deployment(rolled, func(d *appsv1.Deployment) {
			d.Generation = 3
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
		}), RolloutInProgress, "RollingOut"},
		{"an exceeded progress deadline has failed", deployment(rolled, func(d *appsv1.Deployment) {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
		}), RolloutFailed, "ProgressDeadlineExceeded"},
		{"replicas not yet updated are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }), RolloutInProgress, "RollingOut"},
		{"old replicas left are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.Replicas = 3 }), RolloutInProgress, "RollingOut"},
		{"replicas not ready are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }), RolloutInProgress, "RollingOut"},
		{"replicas not available are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 }), RolloutInProgress, "RollingOut"},
		{"a deployment scaled to zero is complete", deployment(rolled, func(d *appsv1.Deployment) {
			*d.Spec.Replicas = 0
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2}
		}), RolloutComplete, "RolloutComplete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DeploymentReadiness(tt.d)
			if got.Rollout != tt.want || got.Reason != tt.reason || got.Message == "" {
				t.Errorf("DeploymentReadiness = %+v, want %s with reason %s and a message", got, tt.want, tt.reason)
			}
		})
	}
}

func TestReadinessMarksOneOfAvailableProgressingDegraded(t *testing.T) {
	tests := []struct {
		rollout Rollout
		want    string // the one condition that is True
	}{
		{RolloutComplete, conditions.Available},
		{RolloutInProgress, conditions.Progressing},
		{RolloutFailed, conditions.Degraded},
	}
	for _, tt := range tests {
		t.Run(string(tt.rollout), func(t *testing.T) {
			var conds []metav1.Condition
			obj := conditions.List(&conds, 1)
			r := Readiness{Rollout: tt.rollout, Reason: "Because", Message: "it is so"}
			if !r.Mark(obj, conditions.Marker{}) {
				t.Fatal("Mark reported no change on an object without conditions")
			}
			for _, typ := range []string{conditions.Available, conditions.Progressing, conditions.Degraded} {
				if conditions.IsTrue(obj, typ) != (typ == tt.want) {
					t.Errorf("%s is %v, want True only for %s", typ, conditions.Find(obj, typ).Status, tt.want)
				}
				if c := conditions.Find(obj, typ); c.Reason != "Because" || c.Message != "it is so" {
					t.Errorf("%s has reason %q message %q", typ, c.Reason, c.Message)
				}
			}
			if r.Mark(obj, conditions.Marker{}) {
				t.Error("marking the same readiness again reported a change")
			}
		})
	}
}

func TestRestrictedSatisfiesThePodSecurityRestrictedLevel(t *testing.T) {
	pod := Restricted(corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "a"}, {Name: "b"}},
	}, 1001)
	if sc := pod.SecurityContext; !*sc.RunAsNonRoot || *sc.RunAsUser != 1001 || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context = %+v", sc)
	}
	for _, c := range append(pod.InitContainers, pod.Containers...) {
		if sc := c.SecurityContext; *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("container %s security context = %+v", c.Name, sc)
		}
	}
}

func TestDeploymentReadinessIsTheSameAtEveryStepUntilAReplicaIsAvailable(t *testing.T) {
	steps := []appsv1.DeploymentStatus{
		{}, // not yet observed
		{ObservedGeneration: 1},
		{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2},
		{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2},
	}
	first := DeploymentReadiness(deployment(func(d *appsv1.Deployment) { d.Generation = 1 }))
	for i, s := range steps {
		got := DeploymentReadiness(deployment(func(d *appsv1.Deployment) { d.Generation, d.Status = 1, s }))
		if got != first {
			t.Errorf("step %d: %+v, want %+v as at the first: the owner's status would be rewritten", i, got, first)
		}
	}
}
