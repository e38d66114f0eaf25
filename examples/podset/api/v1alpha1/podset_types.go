package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodSetSpec is the desired state of a PodSet.
type PodSetSpec struct {
	// Size is the number of pods to run, from 0 to 100; zero scales the set
	// down to none. It is the scale subresource's spec.replicas: kubectl scale
	// sets it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +required
	Size int32 `json:"size"`

	// Suspend stops reconciling the PodSet while true: its Deployment is
	// left as it is, and the Paused condition says so. Set it to false to
	// resume.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// PodSetStatus is the observed state of a PodSet.
type PodSetStatus struct {
	// PodNames are the names of the set's pods, sorted.
	// +listType=atomic
	// +optional
	PodNames []string `json:"podNames,omitempty"`

	// ReadyReplicas is the number of the set's pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Conditions are the latest observations of the PodSet's state.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// ObservedGeneration is the generation of the spec that the status
	// describes; the status is stale while it trails metadata.generation. It is
	// 0, and always written, until the operator has reported on the object, so
	// that a client such as kstatus reads a just-created object as in progress.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// LastHandledReconcileAt is the value of the annotation
	// reconcile.fluxcd.io/requestedAt that the operator last handled: set the
	// annotation to a new value to reconcile the PodSet now, and wait for this
	// field to show it.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// Replicas is the number of the set's pods that exist: the
	// status.replicas of the PodSet's Deployment. It is the scale
	// subresource's status.replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Selector is the label selector of the set's pods, in the string form
	// kubectl's --selector takes. It is the scale subresource's
	// status.selector, which a HorizontalPodAutoscaler uses to find the pods.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// PodSet runs a chosen number of identical pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ps,categories=reconcilekit-examples
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The status of the Ready condition"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.size`,description="The number of pods asked for"
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`,description="The number of the set's pods that exist"
// +kubebuilder:printcolumn:name="Ready-Replicas",type=integer,JSONPath=`.status.readyReplicas`,description="The number of the set's pods that are ready"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Selector",type=string,JSONPath=`.status.selector`,priority=1,description="The label selector of the set's pods"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="The reason of the Ready condition"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1,description="The message of the Ready condition"
type PodSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the PodSet.
	// +required
	Spec PodSetSpec `json:"spec"`

	// Status is the observed state of the PodSet.
	// It is there from creation, with observedGeneration 0.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status PodSetStatus `json:"status,omitempty"`
}

// GetConditions returns the PodSet's status conditions.
func (p *PodSet) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the PodSet's status conditions.
func (p *PodSet) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// GetObservedGeneration returns the generation the PodSet's status describes.
func (p *PodSet) GetObservedGeneration() int64 { return p.Status.ObservedGeneration }

// SetObservedGeneration records the generation the PodSet's status describes.
func (p *PodSet) SetObservedGeneration(g int64) { p.Status.ObservedGeneration = g }

// GetLastHandledReconcileAt returns the reconcile request the PodSet's status last handled.
func (p *PodSet) GetLastHandledReconcileAt() string { return p.Status.LastHandledReconcileAt }

// SetLastHandledReconcileAt records the reconcile request the PodSet's status last handled.
func (p *PodSet) SetLastHandledReconcileAt(v string) { p.Status.LastHandledReconcileAt = v }

// PodSetList is a list of PodSets.
//
// +kubebuilder:object:root=true
type PodSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the PodSets in the list.
	Items []PodSet `json:"items"`
}
