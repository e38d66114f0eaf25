package ownership_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
)

// A stateful operator's logic ensures a StatefulSet with a claim for each pod, the headless
// Service that names its pods and the PodDisruptionBudget that protects a quorum of them,
// and reports its readiness in its conditions. A claim template that can no longer change is reported, not retried.
func ExampleStatefulSet() {
	var (
		ctx   context.Context
		w     ownership.Writer // scope.Writer
		owner interface {
			client.Object
			conditions.Setter
		} // the object being reconciled
		replicas int32 = 3
	)
	labels := map[string]string{"app.kubernetes.io/instance": owner.GetName()}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: ownership.Restricted(corev1.PodSpec{Containers: []corev1.Container{{
			Name: "db", Image: "postgres:17",
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}},
		}}}, 999),
	}
	ns, name := owner.GetNamespace(), owner.GetName()

	quorum := intstr.FromInt32(replicas/2 + 1)
	pdb, _, err := ownership.Ensure(ctx, w, owner, ownership.PodDisruptionBudget(ns, name, quorum, labels))
	if err != nil {
		return // requeue.Retry(err)
	}
	peers := corev1.ServicePort{Name: "peer", Port: 5433}
	if _, _, err := ownership.Ensure(ctx, w, owner, ownership.HeadlessService(ns, name, labels, peers)); err != nil {
		return // requeue.Retry(err)
	}
	desired := ownership.StatefulSet(ns, name, replicas, template, ownership.ClaimTemplate("data", resource.MustParse("10Gi")))
	sts, _, err := ownership.Ensure(ctx, w, owner, desired)
	if err != nil && !ownership.IsImmutable(err) {
		return // requeue.Retry(err)
	}
	r := ownership.StatefulSetReadiness(sts, pdb)
	if ownership.IsImmutable(err) {
		// sts is live with everything else applied. A retry cannot change its claim
		// templates: the desired state is out of reach until a person acts, which Degraded
		// says, while Available still says whether it serves.
		r.Rollout, r.Reason, r.Message = ownership.RolloutFailed, "ClaimTemplatesUnchangeable", err.Error()
	}
	r.Mark(owner)
}

// A StatefulSet of 3 rolling to a new image has replaced one pod, which is not ready yet:
// the two others serve, so it is available while the rollout is in progress.
func ExampleStatefulSetReadiness() {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 1, CurrentReplicas: 2,
			CurrentRevision: "db-1", UpdateRevision: "db-2",
		},
	}
	r := ownership.StatefulSetReadiness(sts, nil)
	fmt.Println(r.Available, r.AvailableReason, r.AvailableMessage)
	fmt.Println(r.Rollout, r.Reason, r.Message)

	pdb := ownership.PodDisruptionBudget("shop", "db", intstr.FromString("100%"), nil)
	r = ownership.StatefulSetReadiness(sts, pdb)
	fmt.Println(r.Available, r.AvailableReason, r.AvailableMessage)
	// Output:
	// true MinimumReplicasAvailable minimum availability: 2 of 3 replicas ready, 2 needed (a majority)
	// InProgress RollingOut 2 of 3 replicas ready, 2 to update
	// false MinimumReplicasUnavailable below minimum availability: 2 of 3 replicas ready, 3 needed (the PodDisruptionBudget's minAvailable 100%)
}
