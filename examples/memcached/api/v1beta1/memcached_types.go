package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The defaults of a Memcached's server, set by the operator's defaulting webhook and
// assumed by the controller when a field is unset (an object written while no webhook
// served, or stored by v1alpha1).
const (
	// DefaultPort is the port memcached listens on.
	DefaultPort int32 = 11211
	// DefaultMemoryLimitMiB is the memory memcached keeps items in.
	DefaultMemoryLimitMiB int32 = 64
)

// MemcachedSpec is the desired state of a Memcached.
type MemcachedSpec struct {
	// Replicas is the number of memcached instances to run, from 1 to 3.
	// It is the scale subresource's spec.replicas: kubectl scale sets it.
	// v1alpha1 calls it spec.size.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3
	// +required
	Replicas int32 `json:"replicas"`

	// Server is how each memcached instance runs.
	// +kubebuilder:default={}
	// +optional
	Server MemcachedServer `json:"server,omitempty"`

	// Suspend stops reconciling the Memcached while true: its Deployment
	// and Service are left as they are, and the Paused condition says so.
	// Set it to false to resume.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// MemcachedServer is how each memcached instance of a Memcached runs.
type MemcachedServer struct {
	// Port is the port memcached listens on, from 1 to 65535; 11211 when
	// unset. v1alpha1 calls it spec.containerPort.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=11211
	// +optional
	Port int32 `json:"port,omitempty"`

	// MemoryLimitMiB is the memory, in MiB, memcached keeps items in
	// (its -m), from 16 to 8192; 64 when unset. v1alpha1 has no field for
	// it: a v1alpha1 client keeps it without seeing it.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=8192
	// +optional
	MemoryLimitMiB int32 `json:"memoryLimitMiB,omitempty"`

	// ConfigMapRef names a ConfigMap in the Memcached's namespace whose
	// key "args" holds more memcached arguments, separated by spaces,
	// such as "-c 2048". The ConfigMap must carry the label
	// cache.example.com/memcached-config (any value): the operator
	// watches those alone, and refuses to name one that lacks it. A change
	// rolls the pods. Unset: none. v1alpha1 calls its name
	// spec.configMapName.
	// +optional
	ConfigMapRef *ConfigMapReference `json:"configMapRef,omitempty"`
}

// ConfigMapReference names a ConfigMap in the namespace of the object that holds it.
type ConfigMapReference struct {
	// Name is the ConfigMap's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// MemcachedStatus is the observed state of a Memcached.
type MemcachedStatus struct {
	// Conditions are the latest observations of the Memcached's state:
	// Available, Progressing and Degraded.
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
	// annotation to a new value to reconcile the Memcached now, and wait for this
	// field to show it.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// Replicas is the number of memcached pods that exist: the
	// status.replicas of the Memcached's Deployment. It is the scale
	// subresource's status.replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of memcached pods that are ready: the
	// status.readyReplicas of the Memcached's Deployment.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Selector is the label selector of the memcached pods, in the string
	// form kubectl's --selector takes. It is the scale subresource's
	// status.selector, which a HorizontalPodAutoscaler uses to find the pods.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// The operator's admission webhooks (controller.Webhooks), served for v1beta1: the API
// server converts a v1alpha1 request to v1beta1 before it calls them (matchPolicy
// Equivalent). controller-gen writes them into config/webhook/manifests.yaml.
// +kubebuilder:webhook:path=/mutate-cache-example-com-v1beta1-memcached,mutating=true,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1beta1,name=default.memcacheds.cache.example.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-cache-example-com-v1beta1-memcached,mutating=false,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1beta1,name=validate.memcacheds.cache.example.com,admissionReviewVersions=v1

// Memcached runs a memcached cache of a chosen size.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=mc,categories=reconcilekit-examples
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The status of the Ready condition"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`,description="The number of memcached pods asked for"
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`,description="The number of memcached pods that exist"
// +kubebuilder:printcolumn:name="Ready-Replicas",type=integer,JSONPath=`.status.readyReplicas`,description="The number of memcached pods that are ready"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Port",type=integer,JSONPath=`.spec.server.port`,priority=1,description="The port memcached listens on"
// +kubebuilder:printcolumn:name="Selector",type=string,JSONPath=`.status.selector`,priority=1,description="The label selector of the memcached pods"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="The reason of the Ready condition"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1,description="The message of the Ready condition"
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the Memcached.
	// +required
	Spec MemcachedSpec `json:"spec"`

	// Status is the observed state of the Memcached.
	// It is there from creation, with observedGeneration 0.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status MemcachedStatus `json:"status,omitempty"`
}

// GetConditions returns the Memcached's status conditions.
func (m *Memcached) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the Memcached's status conditions.
func (m *Memcached) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// GetObservedGeneration returns the generation the Memcached's status describes.
func (m *Memcached) GetObservedGeneration() int64 { return m.Status.ObservedGeneration }

// SetObservedGeneration records the generation the Memcached's status describes.
func (m *Memcached) SetObservedGeneration(g int64) { m.Status.ObservedGeneration = g }

// GetLastHandledReconcileAt returns the reconcile request the Memcached's status last handled.
func (m *Memcached) GetLastHandledReconcileAt() string { return m.Status.LastHandledReconcileAt }

// SetLastHandledReconcileAt records the reconcile request the Memcached's status last handled.
func (m *Memcached) SetLastHandledReconcileAt(v string) { m.Status.LastHandledReconcileAt = v }

// MemcachedList is a list of Memcacheds.
//
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Memcacheds in the list.
	Items []Memcached `json:"items"`
}
