package workload_test

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/workload"
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
		Spec: workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{
			Name: "db", Image: "postgres:17",
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}},
		}}}, 999),
	}
	ns, name := owner.GetNamespace(), owner.GetName()

	quorum := intstr.FromInt32(replicas/2 + 1)
	pdb, _, err := ownership.Ensure(ctx, w, owner, workload.PodDisruptionBudget(ns, name, quorum, labels))
	if err != nil {
		return // requeue.Retry(err)
	}
	peers := corev1.ServicePort{Name: "peer", Port: 5433}
	if _, _, err := ownership.Ensure(ctx, w, owner, workload.HeadlessService(ns, name, labels, peers)); err != nil {
		return // requeue.Retry(err)
	}
	desired := workload.StatefulSet(ns, name, replicas, template, workload.ClaimTemplate("data", resource.MustParse("10Gi")))
	sts, _, err := ownership.Ensure(ctx, w, owner, desired)
	if err != nil && !ownership.IsImmutable(err) {
		return // requeue.Retry(err)
	}
	r := readiness.StatefulSet(sts, pdb)
	if ownership.IsImmutable(err) {
		// sts is live with everything else applied. A retry cannot change its claim
		// templates: the desired state is out of reach until a person acts, which Degraded
		// says, while Available still says whether it serves.
		r.Rollout, r.Reason, r.Message = readiness.RolloutFailed, "ClaimTemplatesUnchangeable", err.Error()
	}
	r.Mark(owner)
}
