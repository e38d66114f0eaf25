package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodSetSpec is the desired state of a PodSet.
type PodSetSpec struct {
	// Size is the number of pods to run; zero scales the set down to none.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +required
	Size int32 `json:"size"`
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
	// describes; the status is stale while it trails metadata.generation.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// PodSet runs a chosen number of identical pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the PodSet.
	// +required
	Spec PodSetSpec `json:"spec"`

	// Status is the observed state of the PodSet.
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

// PodSetList is a list of PodSets.
//
// +kubebuilder:object:root=true
type PodSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the PodSets in the list.
	Items []PodSet `json:"items"`
}
