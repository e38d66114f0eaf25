package shapes_test

import (
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
	Spec              Spec `json:"spec,omitempty"`
	Status            `json:"status,omitempty"`
}

func (o *Site) DeepCopyObject() runtime.Object { return deepCopy(o) }

// Access is the custom resource of shape (c): a cluster-scoped owner of a ClusterRole and a ClusterRoleBinding.
type Access struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
	Status            `json:"status,omitempty"`
}

func (o *Access) DeepCopyObject() runtime.Object { return deepCopy(o) }

// Bucket is the custom resource of shape (e): an owner with no children whose finalizer deletes what it stands for outside the cluster.
type Bucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
	Status            `json:"status,omitempty"`
}

func (o *Bucket) DeepCopyObject() runtime.Object { return deepCopy(o) }

// Batch is the custom resource of shape (f): an owner of children named by generateName.
type Batch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
	Status            `json:"status,omitempty"`
}

func (o *Batch) DeepCopyObject() runtime.Object { return deepCopy(o) }

// Mirror is the custom resource of shape (d): a namespaced owner that reads a Secret in a fixed namespace and writes a child there.
type Mirror struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
	Status            `json:"status,omitempty"`
}

func (o *Mirror) DeepCopyObject() runtime.Object { return deepCopy(o) }
