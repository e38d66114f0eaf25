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
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "batch.tutorial.kubebuilder.io", Version: "v1"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// addKnownTypes registers the kinds of this package under GroupVersion.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &CronJob{}, &CronJobList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
