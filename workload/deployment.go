package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Deployment returns the desired Deployment for an owner: name and namespace from the
// arguments, the given replicas, and pods from template whose labels double as the selector.
// Pass it to ownership.Ensure, which then keeps spec.replicas at replicas; an owner whose replicas an
// autoscaler manages uses AutoscaledDeployment instead.
func Deployment(namespace, name string, replicas int32, template corev1.PodTemplateSpec) *appsv1.Deployment {
	d := AutoscaledDeployment(namespace, name, template)
	d.Spec.Replicas = ptr.To(replicas)
	return d
}

// AutoscaledDeployment is Deployment without spec.replicas, for an owner whose replicas an
// autoscaler (a HorizontalPodAutoscaler) manages. ownership.Ensure compares and applies only the fields
// the desired object sets, so it never reverts the autoscaler's count and never writes
// because of it. The API server starts the Deployment at 1 replica until the autoscaler acts.
//
// The plain create that makes the Deployment leaves that defaulted count owned by ownership.Ensure's
// field manager, like every field of the object created, until someone else sets it or
// ownership.Ensure next applies a change: an autoscaler's update through the scale subresource takes
// it over without conflict, a server-side apply of someone else's must force it.
func AutoscaledDeployment(namespace, name string, template corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: template.Labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: template.Labels},
			Template: template,
		},
	}
}
