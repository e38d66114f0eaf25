package shapes_test

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// version is the API group and version of the shapes' custom resources.
var version = schema.GroupVersion{Group: "shapes.example.com", Version: "v1"}

func addToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(version, &Tenant{}, &Site{}, &Access{}, &Bucket{}, &Batch{}, &Mirror{})
	// A list's kind is its item's followed by List, which the generic type's name is not.
	for kind, list := range map[string]runtime.Object{
		"TenantList": &List[Tenant]{}, "SiteList": &List[Site]{}, "AccessList": &List[Access]{},
		"BucketList": &List[Bucket]{}, "BatchList": &List[Batch]{}, "MirrorList": &List[Mirror]{},
	} {
		s.AddKnownTypeWithName(version.WithKind(kind), list)
	}
	metav1.AddToGroupVersion(s, version)
	return nil
}

// Status is the status every shape's custom resource has, embedded (its field is named
// Status, as the shell wants): conditions, as the shell writes them.
type Status struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// The accessors of a shape's conditions and observed generation, which the shell reads
// and writes through: each kind embeds its Status, which brings them along.
func (s *Status) GetConditions() []metav1.Condition  { return s.Conditions }
func (s *Status) SetConditions(c []metav1.Condition) { s.Conditions = c }
func (s *Status) GetObservedGeneration() int64       { return s.ObservedGeneration }
func (s *Status) SetObservedGeneration(g int64)      { s.ObservedGeneration = g }

// deepCopy is a deep copy of o through its JSON, which holds all of a shape's object: one
// function for every kind, where generated ones would repeat each field's copy.
func deepCopy[T any](o *T) *T {
	data, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	c := new(T)
	if err := json.Unmarshal(data, c); err != nil {
		panic(err)
	}
	return c
}

// List is a list of a shape's objects: TenantList, SiteList and so on (addToScheme).
type List[T any] struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []T `json:"items"`
}

func (l *List[T]) DeepCopyObject() runtime.Object { return deepCopy(l) }

// Tenant is the cluster-scoped owner of shape (b): it makes a namespace named after it
// and a ResourceQuota there, and is not deleted while claims are left in the namespace.
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              TenantSpec `json:"spec,omitempty"`
	Status            `json:"status,omitempty"`
}

// TenantSpec is what a tenant is given.
type TenantSpec struct {
	// Pods is the most pods the tenant's namespace may hold, as a quantity.
	Pods string `json:"pods,omitempty"`
}

func (o *Tenant) DeepCopyObject() runtime.Object { return deepCopy(o) }
