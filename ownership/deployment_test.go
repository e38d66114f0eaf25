package ownership

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
		{"an unobserved generation is in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Generation = 3 }), RolloutInProgress, "RolloutNotObserved"},
		{"an exceeded progress deadline has failed", deployment(rolled, func(d *appsv1.Deployment) {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
		}), RolloutFailed, "ProgressDeadlineExceeded"},
		{"replicas not yet updated are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }), RolloutInProgress, "RollingOut"},
		{"old replicas left are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.Replicas = 3 }), RolloutInProgress, "OldReplicasPending"},
		{"replicas not ready are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }), RolloutInProgress, "ReplicasNotReady"},
		{"replicas not available are in progress", deployment(rolled, func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 }), RolloutInProgress, "ReplicasNotAvailable"},
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
