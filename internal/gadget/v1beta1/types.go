// Package v1beta1 is the storage version, the hub of the Gadget, a kind made for the tests of webhooks and
// conversion only.
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the Gadget's group and this version.
var GroupVersion = schema.GroupVersion{Group: "webhooks.reconcilekit.io", Version: "v1beta1"}

// AddToScheme adds this version's kinds to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Gadget is the kind.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GadgetSpec   `json:"spec,omitempty"`
	Status GadgetStatus `json:"status,omitempty"`
}

// GadgetSpec is what a Gadget wants.
type GadgetSpec struct {
	// Replicas is how many the gadget runs; v1alpha1 calls it size.
	Replicas int32 `json:"replicas,omitempty"`
	// Mode is how it runs.
	Mode string `json:"mode,omitempty"`
	// Paused stops it; v1alpha1 has no room for it.
	Paused bool `json:"paused,omitempty"`
}

// GadgetStatus is what a Gadget is.
type GadgetStatus struct {
	// Phase is where it is.
	Phase string `json:"phase,omitempty"`
}

// GadgetList is a list of Gadgets.
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}

// DeepCopyObject copies g.
func (g *Gadget) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject copies l.
func (l *GadgetList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Gadget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Gadget)
	}
	return &out
}
