package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeyvalSpec is the desired state of a Keyval.
type KeyvalSpec struct {
	// Replicas is the number of key-value servers to run, from 1 to 5, each with
	// a volume of its own. A majority of them must be ready for the Keyval to
	// be Available. It is the scale subresource's spec.replicas: kubectl scale
	// sets it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +required
	Replicas int32 `json:"replicas"`

	// Config holds redis.conf directives, such as maxmemory: 64mb, written
	// into the servers' configuration file after the operator's own. A change
	// rolls the servers, one at a time. The operator sets port and dir itself.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="!('port' in self) && !('dir' in self)",message="port and dir are set by the operator"
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// Storage is the volume each server keeps its data on.
	// +kubebuilder:default={}
	// +optional
	Storage KeyvalStorage `json:"storage,omitempty"`

	// Suspend stops reconciling the Keyval while true: its StatefulSet,
	// Services, PodDisruptionBudget and ConfigMap are left as they are, and
	// the Paused condition says so. Set it to false to resume.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// KeyvalStorage is the volume each server of a Keyval keeps its data on.
type KeyvalStorage struct {
	// Size is the capacity of each server's volume; 1Gi when unset. The
	// volumes' claims are made once: a later change is reported, in the
	// Degraded condition, and not applied.
	// +kubebuilder:default="1Gi"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// ClassName is the StorageClass of the volumes; the cluster's default
	// when empty. Like Size, it is used once.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClassName string `json:"className,omitempty"`

	// WhenDeleted says what happens to the volumes when the Keyval is
	// deleted: Retain (the default) keeps them, and a Keyval of the same name
	// created later finds its data again; Delete deletes them, and the
	// Keyval is gone only once they are.
	// +kubebuilder:default=Retain
	// +optional
	WhenDeleted ClaimRetention `json:"whenDeleted,omitempty"`
}

// ClaimRetention says what happens to a Keyval's volumes when it is deleted.
// +kubebuilder:validation:Enum=Retain;Delete
type ClaimRetention string

// The ways a Keyval's volumes go when it is deleted.
const (
	// Retain keeps the volumes of a deleted Keyval.
	Retain ClaimRetention = "Retain"
	// Delete deletes the volumes of a deleted Keyval before it goes.
	Delete ClaimRetention = "Delete"
)

// KeyvalStatus is the observed state of a Keyval.
type KeyvalStatus struct {
	// Conditions are the latest observations of the Keyval's state:
	// Available, Progressing and Degraded, and Ready, Reconciling and Stalled
	// from them.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// ObservedGeneration is the generation of the spec that the status
	// describes; the status is stale while it trails metadata.generation. It is
	// 0, and always written, until the operator has reported on the object, so
	// that a client such as kstatus reads a just-created object as in progress.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// LastHandledReconcileAt is the value of the annotation
	// reconcile.fluxcd.io/requestedAt that the operator last handled: set the
	// annotation to a new value to reconcile the Keyval now, and wait for this
	// field to show it.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// Replicas is the number of servers that exist: the status.replicas of the
	// Keyval's StatefulSet. It is the scale subresource's status.replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of servers that are ready: the
	// status.readyReplicas of the Keyval's StatefulSet.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Selector is the label selector of the servers' pods, in the string form
	// kubectl's --selector takes. It is the scale subresource's
	// status.selector, which a HorizontalPodAutoscaler uses to find the pods.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// Keyval runs a replicated key-value store: servers with a volume each, a
// Service for clients and a PodDisruptionBudget that keeps a majority of them
// serving.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=kv,categories=reconcilekit-examples
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The status of the Ready condition"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`,description="The number of servers asked for"
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`,description="The number of servers that exist"
// +kubebuilder:printcolumn:name="Ready-Replicas",type=integer,JSONPath=`.status.readyReplicas`,description="The number of servers that are ready"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.spec.storage.size`,priority=1,description="The capacity of each server's volume"
// +kubebuilder:printcolumn:name="Selector",type=string,JSONPath=`.status.selector`,priority=1,description="The label selector of the servers' pods"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="The reason of the Ready condition"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1,description="The message of the Ready condition"
type Keyval struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the Keyval.
	// +required
	Spec KeyvalSpec `json:"spec"`

	// Status is the observed state of the Keyval.
	// It is there from creation, with observedGeneration 0.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status KeyvalStatus `json:"status,omitempty"`
}

// GetConditions returns the Keyval's status conditions.
func (k *Keyval) GetConditions() []metav1.Condition { return k.Status.Conditions }

// SetConditions replaces the Keyval's status conditions.
func (k *Keyval) SetConditions(c []metav1.Condition) { k.Status.Conditions = c }

// GetObservedGeneration returns the generation the Keyval's status describes.
func (k *Keyval) GetObservedGeneration() int64 { return k.Status.ObservedGeneration }

// SetObservedGeneration records the generation the Keyval's status describes.
func (k *Keyval) SetObservedGeneration(g int64) { k.Status.ObservedGeneration = g }

// GetLastHandledReconcileAt returns the reconcile request the Keyval's status last handled.
func (k *Keyval) GetLastHandledReconcileAt() string { return k.Status.LastHandledReconcileAt }

// SetLastHandledReconcileAt records the reconcile request the Keyval's status last handled.
func (k *Keyval) SetLastHandledReconcileAt(v string) { k.Status.LastHandledReconcileAt = v }

// KeyvalList is a list of Keyvals.
//
// +kubebuilder:object:root=true
type KeyvalList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Keyvals in the list.
	Items []Keyval `json:"items"`
}
