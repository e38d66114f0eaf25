// Package v1 is the v1 API of the CronJob example operator: the CronJob kind of the
// batch.tutorial.kubebuilder.io group, the kubebuilder book's tutorial.
//
// +kubebuilder:object:generate=true
// +groupName=batch.tutorial.kubebuilder.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// SchemeGroupVersion is the group and version of every kind in this package, by the
	// name kubebuilder's and controller-gen's generated code use.
	SchemeGroupVersion = schema.GroupVersion{Group: "batch.tutorial.kubebuilder.io", Version: "v1"}
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
	s.AddKnownTypes(GroupVersion, &CronJob{}, &CronJobList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
