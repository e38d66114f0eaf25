package v1

import (
	kbatch "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a CronJob does when a run comes due while Jobs of earlier
// runs still run.
//
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

// The concurrency policies.
const (
	// AllowConcurrent starts the run beside the Jobs still running.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the run while a Job runs; it is not made up later.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the Jobs still running, then starts the run.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CronJobSpec is the desired state of a CronJob.
type CronJobSpec struct {
	// Schedule is when to run, in cron format: five fields (minute, hour, day of
	// month, month, day of week) such as "0 * * * *", or a descriptor such as
	// "@hourly" or "@every 90m". Read in TimeZone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.trim().startsWith('TZ=') && !self.trim().startsWith('CRON_TZ=')",message="set the time zone in spec.timeZone, not in the schedule"
	// +required
	Schedule string `json:"schedule"`

	// TimeZone is the name of the time zone the schedule is read in, such as
	// "Europe/Berlin", from the operator's time zone database; UTC when unset.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// StartingDeadlineSeconds is how late, in seconds, a run may still start after
	// its scheduled time, after an outage say; a run later than that is skipped.
	// Unset, a run may start however late.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// ConcurrencyPolicy says what to do when a run comes due while Jobs of earlier
	// runs still run: Allow (the default) starts it beside them, Forbid skips it,
	// Replace deletes them and starts it.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// Suspend, while true, starts no new run; the Jobs already started run on, and
	// the history is still kept and pruned.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// JobTemplate is the Job each run creates. Its pods run with the restricted
	// Pod Security settings unless its pod template sets a securityContext.
	// +required
	JobTemplate kbatch.JobTemplateSpec `json:"jobTemplate"`

	// SuccessfulJobsHistoryLimit is how many Jobs that succeeded to keep, the
	// newest; 3 unless set.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=3
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many Jobs that failed to keep, the newest; 1
	// unless set.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// CronJobStatus is the observed state of a CronJob.
type CronJobStatus struct {
	// Active are the Jobs of this CronJob still running, by name.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// LastScheduleTime is the time of the last run started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulTime is when a Job of this CronJob last succeeded.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// Conditions are the latest observations of the CronJob's state: Available
	// (with the reason of what its Jobs do: JobsActive, LastRunSucceeded,
	// LastRunFailed, NoRunYet, Suspended), and Ready, which is True once every due
	// run is started, whatever the Jobs do.
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
	// annotation to a new value to reconcile the CronJob now, and wait for this
	// field to show it.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// CronJob runs a Job on a cron schedule, and keeps the newest of them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=reconcilekit-examples
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The status of the Ready condition"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`,description="When the Jobs run"
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`,description="Whether new runs are suspended"
// +kubebuilder:printcolumn:name="Last-Run",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].reason`,description="What the Jobs do: the reason of the Available condition"
// +kubebuilder:printcolumn:name="Last-Schedule",type=date,JSONPath=`.status.lastScheduleTime`,description="When the last run started"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].message`,priority=1,description="The message of the Available condition"
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the CronJob.
	// +required
	Spec CronJobSpec `json:"spec"`

	// Status is the observed state of the CronJob.
	// It is there from creation, with observedGeneration 0.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status CronJobStatus `json:"status,omitempty"`
}

// GetConditions returns the CronJob's status conditions.
func (c *CronJob) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the CronJob's status conditions.
func (c *CronJob) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

// GetObservedGeneration returns the generation the CronJob's status describes.
func (c *CronJob) GetObservedGeneration() int64 { return c.Status.ObservedGeneration }

// SetObservedGeneration records the generation the CronJob's status describes.
func (c *CronJob) SetObservedGeneration(g int64) { c.Status.ObservedGeneration = g }

// GetLastHandledReconcileAt returns the reconcile request the CronJob's status last handled.
func (c *CronJob) GetLastHandledReconcileAt() string { return c.Status.LastHandledReconcileAt }

// SetLastHandledReconcileAt records the reconcile request the CronJob's status last handled.
func (c *CronJob) SetLastHandledReconcileAt(v string) { c.Status.LastHandledReconcileAt = v }

// CronJobList is a list of CronJobs.
//
// +kubebuilder:object:root=true
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the CronJobs in the list.
	Items []CronJob `json:"items"`
}
