// Package v1alpha1 is the v1alpha1 API of the operator: the Widget kind of the
// starter.example.com group.
//
// +kubebuilder:object:generate=true
// +groupName=starter.example.com
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// SchemeGroupVersion is the group and version of every kind in this package, by the
	// name kubebuilder's and controller-gen's generated code use.
	SchemeGroupVersion = schema.GroupVersion{Group: "starter.example.com", Version: "v1alpha1"}
	// GroupVersion is SchemeGroupVersion.
	GroupVersion = SchemeGroupVersion

	// SchemeBuilder adds the kinds of this package to a scheme; a kind that kubebuilder
	// create api adds to the package registers itself with it.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers the kinds of this package under GroupVersion.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
