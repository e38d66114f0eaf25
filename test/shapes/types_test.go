package shapes_test

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// version is the API group and version of the shapes' custom resources.
var version = schema.GroupVersion{Group: "shapes.example.com", Version: "v1"}

func addToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(version, &Tenant{}, &TenantList{}, &Site{}, &SiteList{}, &Access{}, &AccessList{},
		&Bucket{}, &BucketList{}, &Batch{}, &BatchList{}, &Mirror{}, &MirrorList{})
	metav1.AddToGroupVersion(s, version)
	return nil
}

// Status is the status every shape's custom resource has: conditions, as the shell
// writes them.
type Status struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// Tenant is the cluster-scoped owner of shape (b): it makes a namespace named after it
// and a ResourceQuota there, and is not deleted while claims are left in the namespace.
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              TenantSpec `json:"spec,omitempty"`
	Status            Status     `json:"status,omitempty"`
}

// TenantSpec is what a tenant is given.
type TenantSpec struct {
	// Pods is the most pods the tenant's namespace may hold, as a quantity.
	Pods string `json:"pods,omitempty"`
}

func (o *Tenant) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Tenant) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Tenant) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Tenant) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Tenant) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Status.Conditions = slices.Clone(o.Status.Conditions)
	return &c
}

// TenantList is a list of Tenants.
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}

func (l *TenantList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Tenant, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Tenant)
	}
	return &c
}
