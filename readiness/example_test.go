package readiness_test

import (
	"fmt"

	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/workload"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// A StatefulSet of 3 rolling to a new image has replaced one pod, which is not ready yet:
// the two others serve, so it is available while the rollout is in progress.
func ExampleStatefulSet() {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 1, CurrentReplicas: 2,
			CurrentRevision: "db-1", UpdateRevision: "db-2",
		},
	}
	r := readiness.StatefulSet(sts, nil)
	fmt.Println(r.Available, r.AvailableReason, r.AvailableMessage)
	fmt.Println(r.Rollout, r.Reason, r.Message)

	pdb := workload.PodDisruptionBudget("shop", "db", intstr.FromString("100%"), nil)
	r = readiness.StatefulSet(sts, pdb)
	fmt.Println(r.Available, r.AvailableReason, r.AvailableMessage)
	// Output:
	// true MinimumReplicasAvailable minimum availability: 2 of 3 replicas ready, 2 needed (a majority)
	// InProgress RollingOut 2 of 3 replicas ready, 2 to update
	// false MinimumReplicasUnavailable below minimum availability: 2 of 3 replicas ready, 3 needed (the PodDisruptionBudget's minAvailable 100%)
}

// A Deployment resized from 2 to 3 replicas still serves from the 2 it has: it is available
// while the resize is in progress.
func ExampleDeployment() {
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{
				Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			}},
		},
	}
	r := readiness.Deployment(dep)
	fmt.Println(r.Available, r.AvailableReason, r.AvailableMessage)
	fmt.Println(r.Rollout, r.Reason, r.Message)
	// Output:
	// true MinimumReplicasAvailable minimum availability: 2 of 3 replicas available
	// InProgress RollingOut 2 of 3 replicas available
}

// The readiness of a StatefulSet, by kstatus' rules, marked in the owner's conditions like a
// Deployment's.
func ExampleOf() {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 2},
		Status:     appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 1, ReadyReplicas: 0},
	}
	r, err := readiness.Of(sts)
	if err != nil {
		return
	}
	fmt.Println(r.Rollout, r.Reason, r.Message)
	// Output: InProgress InProgress Ready: 0/1
}
