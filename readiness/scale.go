package readiness

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scale is what an owner of a Deployment or a StatefulSet reports in its status for its
// scale subresource (`+kubebuilder:subresource:scale:specpath=...,statuspath=.status.replicas,selectorpath=.status.selector`),
// so that kubectl scale and a HorizontalPodAutoscaler can work with the owner.
type Scale struct {
	// Replicas is the number of pods that exist, the workload's status.replicas.
	Replicas int32
	// ReadyReplicas is the number of those pods that are ready.
	ReadyReplicas int32
	// Selector selects the pods, in the string form of a label selector; an
	// autoscaler finds the pods to measure with it.
	Selector string
}

// DeploymentScale returns the Scale of d. A selector that cannot be converted (the API
// server validates it, so only a hand-made Deployment has one) gives an empty Selector.
func DeploymentScale(d *appsv1.Deployment) Scale {
	return scaleOf(d.Status.Replicas, d.Status.ReadyReplicas, d.Spec.Selector)
}

// scaleOf is the Scale of a workload's counts and selector.
func scaleOf(replicas, ready int32, selector *metav1.LabelSelector) Scale {
	s := Scale{Replicas: replicas, ReadyReplicas: ready}
	if sel, err := metav1.LabelSelectorAsSelector(selector); err == nil && selector != nil {
		s.Selector = sel.String()
	}
	return s
}
