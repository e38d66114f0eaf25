package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The phases of an At, in the only order it moves through them.
const (
	// PhasePending is the first phase: the At waits for its schedule.
	PhasePending = "PENDING"
	// PhaseRunning lasts while the command runs in the At's pod.
	PhaseRunning = "RUNNING"
	// PhaseDone is final: the command ran once and ended.
	PhaseDone = "DONE"
)

// AtSpec is the desired state of an At.
type AtSpec struct {
	// Schedule is when to run the command: an RFC 3339 time in UTC, ending in Z,
	// such as 2030-01-02T15:04:05Z; fractions of a second are allowed, an offset
	// such as +02:00 is not. At most 64 characters.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z$') && !format.datetime().validate(self).hasValue()",message="schedule must be an RFC 3339 time in UTC ending in Z, such as 2026-01-02T15:04:05Z"
	// +required
	Schedule string `json:"schedule"`

	// Command is the shell command to run once, when the schedule comes due;
	// it must not be empty.
	// +kubebuilder:validation:MinLength=1
	// +required
	Command string `json:"command"`

	// Suspend stops reconciling the At while true: a command not yet
	// started does not start, even when its schedule comes due, and the
	// Paused condition says so. Set it to false to resume.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// AtStatus is the observed state of an At.
type AtStatus struct {
	// Phase is PENDING until the schedule comes due, RUNNING while the
	// command runs and DONE once it has ended.
	// +optional
	// +kubebuilder:validation:Enum=PENDING;RUNNING;DONE
	Phase string `json:"phase,omitempty"`

	// PodName is the name of the pod that runs the command.
	// +optional
	PodName string `json:"podName,omitempty"`

	// ExitCode is the command's exit code, once it has ended.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`

	// Conditions are the latest observations of the At's state.
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
	// annotation to a new value to reconcile the At now, and wait for this
	// field to show it.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// At runs a command once, at a scheduled time.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=reconcilekit-examples
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The status of the Ready condition"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="PENDING, RUNNING or DONE"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`,description="When the command runs, in UTC"
// +kubebuilder:printcolumn:name="Result",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].reason`,description="How the command ended: the reason of the Succeeded condition"
// +kubebuilder:printcolumn:name="Exit-Code",type=integer,JSONPath=`.status.exitCode`,description="The command's exit code, once it has ended"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Pod",type=string,JSONPath=`.status.podName`,priority=1,description="The pod that runs the command"
// +kubebuilder:printcolumn:name="Command",type=string,JSONPath=`.spec.command`,priority=1,description="The shell command"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].message`,priority=1,description="The message of the Succeeded condition"
type At struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the At.
	// +required
	Spec AtSpec `json:"spec"`

	// Status is the observed state of the At.
	// It is there from creation, with observedGeneration 0.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status AtStatus `json:"status,omitempty"`
}

// GetConditions returns the At's status conditions.
func (a *At) GetConditions() []metav1.Condition { return a.Status.Conditions }

// SetConditions replaces the At's status conditions.
func (a *At) SetConditions(c []metav1.Condition) { a.Status.Conditions = c }

// GetPhase returns the At's phase, for the phase machine.
func (a *At) GetPhase() string { return a.Status.Phase }

// SetPhase sets the At's phase, for the phase machine.
func (a *At) SetPhase(p string) { a.Status.Phase = p }

// GetObservedGeneration returns the generation the At's status describes.
func (a *At) GetObservedGeneration() int64 { return a.Status.ObservedGeneration }

// SetObservedGeneration records the generation the At's status describes.
func (a *At) SetObservedGeneration(g int64) { a.Status.ObservedGeneration = g }

// GetLastHandledReconcileAt returns the reconcile request the At's status last handled.
func (a *At) GetLastHandledReconcileAt() string { return a.Status.LastHandledReconcileAt }

// SetLastHandledReconcileAt records the reconcile request the At's status last handled.
func (a *At) SetLastHandledReconcileAt(v string) { a.Status.LastHandledReconcileAt = v }

// AtList is a list of Ats.
//
// +kubebuilder:object:root=true
type AtList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Ats in the list.
	Items []At `json:"items"`
}
