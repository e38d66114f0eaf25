package jobs

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/reconcilekit/reconcilekit/workload"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScheduledAnnotation records on a Job the time its run was scheduled for, in RFC 3339:
// the annotation Kubernetes' CronJob controller writes, so that tools that read it (kubectl,
// dashboards) read an operator's Jobs too.
const ScheduledAnnotation = batchv1.CronJobScheduledTimestampAnnotation

// User is the user the pods of a Job run as when its template does not say (see Job).
const User int64 = 65532

// Name returns the name of the Job that runs, for the owner named name, the run
// scheduled at scheduled: name-<minutes since the Unix epoch>, as Kubernetes' CronJob
// controller names its Jobs. The name is the lock that makes each run happen once: every
// reconcile, before or after a restart, computes the same name for the same run, and a
// second create of it fails with AlreadyExists; runs of a cron schedule are at least a
// minute apart, so each has a name of its own. Keep name to 52 characters, as Kubernetes
// does CronJob names, for the Job's pods to be named after it.
func Name(name string, scheduled time.Time) string {
	return name + "-" + strconv.FormatInt(scheduled.Unix()/60, 10)
}

// Job returns the desired Job that runs template for the run scheduled at scheduled of
// the owner named name: named Name(name, scheduled), in namespace, with template's
// labels, annotations and spec, ScheduledAnnotation, and labels added to its own labels and
// its pods' (the owner's labels, which an operator restricts its cache of Jobs by).
//
// Its pods are restricted (Restricted, as user User) unless the template's pod sets a
// security context of its own, which is kept as it is: a namespace that enforces the
// restricted Pod Security level refuses the pods of a Job that leaves it unset.
//
// A Job's pod template cannot change once it exists: pass it to ownership.Ensure with ownership.CreateOnly,
// or to Start, which does.
func New(namespace, name string, scheduled time.Time, template batchv1.JobTemplateSpec, labels map[string]string) *batchv1.Job {
	t := template.DeepCopy()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   namespace,
			Name:        Name(name, scheduled),
			Labels:      withLabels(t.Labels, labels),
			Annotations: withLabels(t.Annotations, map[string]string{ScheduledAnnotation: scheduled.Format(time.RFC3339)}),
		},
		Spec: t.Spec,
	}
	pod := &job.Spec.Template
	pod.Labels = withLabels(pod.Labels, labels)
	if pod.Spec.SecurityContext == nil {
		pod.Spec = workload.Restricted(pod.Spec, User)
	}
	return job
}

// withLabels returns a copy of m with more added, nil when both are empty.
func withLabels(m, more map[string]string) map[string]string {
	if len(m) == 0 && len(more) == 0 {
		return nil
	}
	out := maps.Clone(m)
	if out == nil {
		out = make(map[string]string, len(more))
	}
	maps.Copy(out, more)
	return out
}

// ScheduledTime returns the time the run of j was scheduled for, from ScheduledAnnotation,
// and false when j has none that parses (a Job someone else made).
func ScheduledTime(j *batchv1.Job) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, j.Annotations[ScheduledAnnotation])
	return t, err == nil
}

// State is how a Job's run went.
type State string

// The states of a Job's run.
const (
	// Active: the Job runs, or waits to (suspended, pods pending).
	Active State = "Active"
	// Succeeded: the Job met its success criteria.
	Succeeded State = "Succeeded"
	// Failed: the Job failed (backoffLimit, activeDeadlineSeconds, a pod failure policy).
	Failed State = "Failed"
)

// Outcome is how a Job's run went, read from the Job controller's conditions.
type Outcome struct {
	// State is the run's verdict.
	State State
	// Finished is true once the Job controller has set Complete or Failed: every pod has
	// terminated and the Job changes no more. A Job decided (SuccessCriteriaMet or
	// FailureTarget) but not finished still has pods terminating: it still counts as
	// running for a concurrency policy, and is not yet history to prune.
	Finished bool
	// Reason and Message are those of the condition that decided the verdict (for an active
	// Job, the Suspended condition's, or Running and the pod counts).
	Reason, Message string
	// Time is when the verdict was reached, the condition's lastTransitionTime (for a
	// finished Job that succeeded, status.completionTime when set); for an active Job, its
	// status.startTime, zero until it starts.
	Time time.Time
}

// OutcomeOf reads a Job's outcome, following the Job API's conditions (batch/v1): since
// Kubernetes 1.31 the Job controller first sets SuccessCriteriaMet or FailureTarget, when
// the verdict is reached, and Complete or Failed only once the Job's pods have terminated;
// the API server refuses Complete without SuccessCriteriaMet and Failed without
// FailureTarget (except for a Job whose deadline passed or was suspended before its
// conditions existed). A Job with both verdicts is Failed: the Job controller never sets
// both, and a failure must not be hidden.
func OutcomeOf(j *batchv1.Job) Outcome {
	var found [4]*batchv1.JobCondition
	for i, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			found[0] = &j.Status.Conditions[i]
		case batchv1.JobFailureTarget:
			found[1] = &j.Status.Conditions[i]
		case batchv1.JobComplete:
			found[2] = &j.Status.Conditions[i]
		case batchv1.JobSuccessCriteriaMet:
			found[3] = &j.Status.Conditions[i]
		}
	}
	decided := func(state State, finished bool, c *batchv1.JobCondition) Outcome {
		o := Outcome{State: state, Finished: finished, Reason: c.Reason, Message: c.Message, Time: c.LastTransitionTime.Time}
		if o.Reason == "" {
			o.Reason = string(c.Type)
		}
		if state == Succeeded && finished && j.Status.CompletionTime != nil {
			o.Time = j.Status.CompletionTime.Time
		}
		return o
	}
	switch {
	case found[0] != nil:
		return decided(Failed, true, found[0])
	case found[1] != nil:
		return decided(Failed, false, found[1])
	case found[2] != nil:
		return decided(Succeeded, true, found[2])
	case found[3] != nil:
		return decided(Succeeded, false, found[3])
	}
	o := Outcome{State: Active, Reason: "Running"}
	if j.Status.StartTime != nil {
		o.Time = j.Status.StartTime.Time
	}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobSuspended && c.Status == corev1.ConditionTrue {
			o.Reason, o.Message = "Suspended", c.Message
			return o
		}
	}
	o.Message = fmt.Sprintf("%d active, %d succeeded, %d failed pods", j.Status.Active, j.Status.Succeeded, j.Status.Failed)
	return o
}
