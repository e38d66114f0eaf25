package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// StatefulSet returns the desired StatefulSet for an owner: name and namespace from the
// arguments, the given replicas, pods from template whose labels double as the selector, and
// a claim of each of claims for every pod (ClaimTemplate makes one), which a container of
// template mounts by the claim's name. Its pods are named after the headless Service of the
// same name (spec.serviceName), which the owner ensures beside it (HeadlessService).
//
// Pass it to ownership.Ensure, which keeps spec.replicas at replicas and rolls the pods when the
// template changes. The API server refuses to change the claim templates, the selector, the
// serviceName and the podManagementPolicy once the StatefulSet exists: ownership.Ensure leaves
// differing claim templates as they are and reports them with an *ownership.ImmutableError (see
// ownership.Ensure), so choose the others, which derive from the name and the template's labels, once.
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
// workload's pod template. Pass the live one ownership.Ensure returns to readiness.StatefulSet, so that
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
