package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemcachedSpec is the desired state of a Memcached.
type MemcachedSpec struct {
	// Size is the number of memcached instances to run.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3
	// +required
	Size int32 `json:"size"`

	// ContainerPort is the port memcached listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=11211
	// +optional
	ContainerPort int32 `json:"containerPort,omitempty"`
}

// MemcachedStatus is the observed state of a Memcached.
type MemcachedStatus struct {
	// Conditions are the latest observations of the Memcached's state:
	// Available, Progressing and Degraded.
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

// Memcached runs a memcached cache of a chosen size.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the Memcached.
	// +required
	Spec MemcachedSpec `json:"spec"`

	// Status is the observed state of the Memcached.
	// +optional
	Status MemcachedStatus `json:"status,omitempty"`
}

// GetConditions returns the Memcached's status conditions.
func (m *Memcached) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the Memcached's status conditions.
func (m *Memcached) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// GetObservedGeneration returns the generation the Memcached's status describes.
func (m *Memcached) GetObservedGeneration() int64 { return m.Status.ObservedGeneration }

// SetObservedGeneration records the generation the Memcached's status describes.
func (m *Memcached) SetObservedGeneration(g int64) { m.Status.ObservedGeneration = g }

// MemcachedList is a list of Memcacheds.
//
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Memcacheds in the list.
	Items []Memcached `json:"items"`
}
