package shapes_test

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Spec is the spec of the shapes' custom resources but Tenant: one value, whose meaning
// is each shape's.
type Spec struct {
	Value string `json:"value,omitempty"`
}

// Site is the custom resource of shape (a): a namespaced owner of a namespaced child.
type Site struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

func (o *Site) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Site) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Site) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Site) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Site) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Status.Conditions = slices.Clone(o.Status.Conditions)
	return &c
}

// SiteList is a list of Sites.
type SiteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Site `json:"items"`
}

func (l *SiteList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Site, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Site)
	}
	return &c
}

// Access is the custom resource of shape (c): a cluster-scoped owner of a ClusterRole and a ClusterRoleBinding.
type Access struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

func (o *Access) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Access) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Access) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Access) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Access) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Status.Conditions = slices.Clone(o.Status.Conditions)
	return &c
}

// AccessList is a list of Accesss.
type AccessList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Access `json:"items"`
}

func (l *AccessList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Access, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Access)
	}
	return &c
}

// Bucket is the custom resource of shape (e): an owner with no children whose finalizer deletes what it stands for outside the cluster.
type Bucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

func (o *Bucket) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Bucket) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Bucket) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Bucket) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Bucket) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Status.Conditions = slices.Clone(o.Status.Conditions)
	return &c
}

// BucketList is a list of Buckets.
type BucketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Bucket `json:"items"`
}

func (l *BucketList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Bucket, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Bucket)
	}
	return &c
}

// Batch is the custom resource of shape (f): an owner of children named by generateName.
type Batch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

func (o *Batch) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Batch) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Batch) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Batch) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Batch) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Status.Conditions = slices.Clone(o.Status.Conditions)
	return &c
}

// BatchList is a list of Batchs.
type BatchList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Batch `json:"items"`
}

func (l *BatchList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Batch, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Batch)
	}
	return &c
}

// Mirror is the custom resource of shape (d): a namespaced owner that reads a Secret in a fixed namespace and writes a child there.
type Mirror struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

func (o *Mirror) GetConditions() []metav1.Condition  { return o.Status.Conditions }
func (o *Mirror) SetConditions(c []metav1.Condition) { o.Status.Conditions = c }
func (o *Mirror) GetObservedGeneration() int64       { return o.Status.ObservedGeneration }
func (o *Mirror) SetObservedGeneration(g int64)      { o.Status.ObservedGeneration = g }

func (o *Mirror) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Status.Conditions = slices.Clone(o.Status.Conditions)
	return &c
}

// MirrorList is a list of Mirrors.
type MirrorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Mirror `json:"items"`
}

func (l *MirrorList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Mirror, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Mirror)
	}
	return &c
}
