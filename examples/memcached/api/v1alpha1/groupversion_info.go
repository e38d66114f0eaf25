// Package v1alpha1 is the v1alpha1 API of the Memcached example operator:
// the Memcached kind of the cache.example.com group, as first released. It is still
// served, a spoke of v1beta1, which the CRD stores and the controller reconciles:
// Spoke converts it to and from v1beta1, losing nothing.
//
// +kubebuilder:object:generate=true
// +groupName=cache.example.com
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// SchemeGroupVersion is the group and version of every kind in this package, by the
	// name kubebuilder's and controller-gen's generated code use.
	SchemeGroupVersion = schema.GroupVersion{Group: "cache.example.com", Version: "v1alpha1"}
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
	s.AddKnownTypes(GroupVersion, &Memcached{}, &MemcachedList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
