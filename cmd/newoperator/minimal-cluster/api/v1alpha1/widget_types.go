package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Replicas is the number of servers to run, from 1 to 5, each with a
	// volume of its own. A majority of them must be ready for the Widget to
	// be Available.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +required
	Replicas int32 `json:"replicas"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	// Conditions are the latest observations of the Widget's state:
	// Available, Progressing and Degraded, and Ready, Reconciling and Stalled
	// from them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the generation of the spec that the status
	// describes; the status is stale while it trails metadata.generation. It is
	// 0, and always written, until the operator has reported on the object, so
	// that a client such as kstatus reads a just-created object as in progress.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// ReadyReplicas is the number of servers that are ready: the
	// status.readyReplicas of the Widget's StatefulSet.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

// Widget runs servers that keep their data: a StatefulSet with a volume for
// each, in a namespace of the Widget's own. A Widget is cluster-scoped, so its
// name must leave room for the namespace's prefix (widget-) in a DNS label of
// 63 characters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The status of the Ready condition"
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`,description="The number of servers asked for"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1,description="The message of the Ready condition"
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the Widget.
	// +required
	Spec WidgetSpec `json:"spec"`

	// Status is the observed state of the Widget.
	// It is there from creation, with observedGeneration 0.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// GetConditions returns the Widget's status conditions.
func (w *Widget) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions replaces the Widget's status conditions.
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// GetObservedGeneration returns the generation the Widget's status describes.
func (w *Widget) GetObservedGeneration() int64 { return w.Status.ObservedGeneration }

// SetObservedGeneration records the generation the Widget's status describes.
func (w *Widget) SetObservedGeneration(g int64) { w.Status.ObservedGeneration = g }

// WidgetList is a list of Widgets.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Widgets in the list.
	Items []Widget `json:"items"`
}
