// Package controller holds the CronJob controller, the kubebuilder book's tutorial built
// from the library: it creates a Job for each run of a CronJob's cron schedule, by its
// concurrency policy and starting deadline, keeps the newest Jobs that succeeded and that
// failed, and reports the Jobs that run and the last run's outcome.
package controller

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	kbatch "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/reconcilekit/reconcilekit/conditions"
	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/jobs"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/schedule"
)

// Concurrency is how many CronJobs the manager reconciles at a time unless its
// --max-concurrent-reconciles flag says otherwise.
const Concurrency = 16

const (
	// managedBy labels the Jobs of every CronJob, so that the manager caches those alone.
	managedBy = "cronjob-operator"
	// instanceLabel names a Job's CronJob, for the list of one CronJob's Jobs.
	instanceLabel = "app.kubernetes.io/instance"
	// foreignRecheck is how often a CronJob blocked by a Job it does not own looks again.
	foreignRecheck = time.Minute
)

// Reasons of the conditions and events of a CronJob, beside ownership's
// History.Readiness reasons.
const (
	// ReasonSuspended: spec.suspend is true; no new run starts.
	ReasonSuspended = "Suspended"
	// ReasonInvalidSchedule: the schedule does not parse, or never fires.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonUnknownTimeZone: the time zone is not in the operator's database.
	ReasonUnknownTimeZone = "UnknownTimeZone"
	// ReasonJobNameTaken: the Job of a run has a name a Job someone else owns has.
	ReasonJobNameTaken = "JobNameTaken"
)

// New declares the CronJob controller, with opts added to its own (a test's clock, say,
// or the manager's --max-concurrent-reconciles): the Jobs of its own for each CronJob, of
// CronJobs alone in the manager's cache.
func New(opts ...reconcile.Option) *reconcile.Controller[*batchv1.CronJob] {
	return reconcile.For(&batchv1.CronJob{}, reconcile.LogicFunc[*batchv1.CronJob](Reconcile), managedBy, append([]reconcile.Option{
		reconcile.WithReconcileRequests(""),
		reconcile.WithConcurrency(Concurrency),
		reconcile.WithChildren(&kbatch.Job{}),
		// A cluster-wide Job cache would cost memory for every Job of the cluster. Not the
		// default cache of children (ownership.OwnedByLabel): a Job labelled as the
		// operator's and controlled by a CronJob is one of its Jobs, whoever made it.
		reconcile.WithCache(&kbatch.Job{}, cache.ByObject{
			Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": managedBy}),
		}),
	}, opts...)...)
}

// JobLabels are the labels of a CronJob's Jobs and their pods.
func JobLabels(cj *batchv1.CronJob) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "cronjob",
		instanceLabel:                  cj.Name,
		"app.kubernetes.io/managed-by": managedBy,
	}
}

// Job is the Job of cj's run scheduled at run.
func Job(cj *batchv1.CronJob, run time.Time) *kbatch.Job {
	return jobs.New(cj.Namespace, cj.Name, run, cj.Spec.JobTemplate, JobLabels(cj))
}

// Reconcile is the CronJob controller's logic, which New declares. In order, as Kubernetes'
// CronJob controller: the status from the Jobs, the history pruned, then, unless
// suspended, the run due started, and the next run waited for. The time is the
// reconcile's (Scope.Now).
func Reconcile(ctx context.Context, cj *batchv1.CronJob, s reconcile.Scope) requeue.Outcome {
	owned, err := jobs.List(ctx, s.Client, cj, map[string]string{instanceLabel: cj.Name})
	if err != nil {
		return requeue.Retry(err)
	}
	h := jobs.HistoryOf(owned)
	record(cj, h, s)

	// Pruned first: a namespace full of finished Jobs (a quota reached) must not keep the
	// next run from starting.
	pruned, err := jobs.Prune(ctx, s.Writer, cj, h, limit(cj.Spec.SuccessfulJobsHistoryLimit), limit(cj.Spec.FailedJobsHistoryLimit))
	for _, name := range pruned {
		event(s, cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job "+name)
	}
	if err != nil {
		return requeue.Retry(err)
	}
	if cj.DeletionTimestamp != nil {
		return requeue.Done()
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		conditions.MarkTrue(cj, conditions.Available, ReasonSuspended, "no new run starts while spec.suspend is true")
		return requeue.Done()
	}
	sched, bad := parse(cj)
	if bad != nil {
		return bad.mark(cj)
	}
	last := time.Time{}
	if t := cj.Status.LastScheduleTime; t != nil {
		last = t.Time
	}
	due, err := sched.Due(last, cj.CreationTimestamp.Time, s.Now)
	if err != nil {
		return requeue.Terminal(err)
	}
	if due.TooManyMissed {
		event(s, cj, corev1.EventTypeWarning, "TooManyMissedTimes",
			"too many missed start times: set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	next := requeue.After(max(due.Next.Sub(s.Now), 0))
	if due.Next.IsZero() {
		next = requeue.Done()
	}
	if due.Run.IsZero() {
		h.Readiness(due.Next).Mark(cj)
		return next
	}

	started, err := jobs.Start(ctx, s.Writer, cj, Job(cj, due.Run), h.Active, jobs.ConcurrencyPolicy(cj.Spec.ConcurrencyPolicy))
	for _, name := range started.Replaced {
		event(s, cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job "+name)
	}
	switch {
	case ownership.IsNotControlled(err):
		conditions.MarkTrue(cj, conditions.Stalled, ReasonJobNameTaken, "%v: delete it, or rename this CronJob", err)
		return requeue.After(foreignRecheck)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// Nothing created in a namespace being deleted would be kept: no error to retry.
		return next
	case err != nil:
		// The shell reports the error (a Warning event, Reconciling) and retries it.
		return requeue.Retry(err)
	case started.Job == nil:
		event(s, cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		h.Readiness(due.Next).Mark(cj)
		return next
	}
	if started.Created {
		event(s, cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job "+started.Job.Name)
	}
	cj.Status.LastScheduleTime = &metav1.Time{Time: due.Run}
	h.Active = slices.DeleteFunc(h.Active, func(j kbatch.Job) bool { return slices.Contains(started.Replaced, j.Name) })
	if !jobs.OutcomeOf(started.Job).Finished && !slices.ContainsFunc(h.Active, func(j kbatch.Job) bool { return j.Name == started.Job.Name }) {
		h.Active = append(h.Active, *started.Job)
	}
	record(cj, h, s)
	h.Readiness(due.Next).Mark(cj)
	return next
}

// record writes what the Jobs say into cj's status: the active ones, by name, and the
// latest run and success, which never go back (the Jobs that said so may be pruned).
func record(cj *batchv1.CronJob, h jobs.History, s reconcile.Scope) {
	before := map[string]bool{}
	for _, ref := range cj.Status.Active {
		before[ref.Name] = true
	}
	cj.Status.Active = nil
	for _, j := range h.Active {
		cj.Status.Active = append(cj.Status.Active, corev1.ObjectReference{
			APIVersion: "batch/v1", Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID})
		delete(before, j.Name)
	}
	slices.SortFunc(cj.Status.Active, func(a, b corev1.ObjectReference) int { return strings.Compare(a.Name, b.Name) })
	for _, finished := range [][]kbatch.Job{h.Succeeded, h.Failed} {
		for _, j := range finished {
			if before[j.Name] {
				o := jobs.OutcomeOf(&j)
				event(s, cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: "+j.Name+", state: "+string(o.State)+", reason: "+o.Reason)
			}
		}
	}
	later := func(t *metav1.Time, u time.Time) *metav1.Time {
		if u.IsZero() || t != nil && !u.After(t.Time) {
			return t
		}
		return &metav1.Time{Time: u}
	}
	cj.Status.LastScheduleTime = later(cj.Status.LastScheduleTime, h.LastScheduled)
	cj.Status.LastSuccessfulTime = later(cj.Status.LastSuccessfulTime, h.LastSucceeded)
}

// limit is a history limit: unset keeps every Job.
func limit(n *int32) int {
	if n == nil {
		return jobs.KeepAll
	}
	return int(*n)
}

// stall is a spec no retry can fix, reported as Stalled until the spec changes.
type stall struct{ reason, message string }

// mark reports the stall on cj, and waits for its next change.
func (e *stall) mark(cj *batchv1.CronJob) requeue.Outcome {
	conditions.MarkTrue(cj, conditions.Stalled, e.reason, "%s", e.message)
	return requeue.Done()
}

// parse reads cj's schedule in its time zone, with its starting deadline, or says why it
// cannot.
func parse(cj *batchv1.CronJob) (schedule.Cron, *stall) {
	spec := cj.Spec.Schedule
	if tz := ptr.Deref(cj.Spec.TimeZone, ""); tz != "" {
		if _, err := time.LoadLocation(tz); err != nil {
			return schedule.Cron{}, &stall{ReasonUnknownTimeZone, "invalid timeZone " + strconv.Quote(tz) + ": " + err.Error()}
		}
		spec = "CRON_TZ=" + tz + " " + spec
	}
	sched, err := schedule.ParseCron(spec)
	if err != nil {
		return schedule.Cron{}, &stall{ReasonInvalidSchedule, err.Error()}
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil {
		// A deadline of 0 means what it says: a run starts on time or not at all.
		sched.StartingDeadline = max(time.Duration(*d)*time.Second, time.Nanosecond)
	}
	return sched, nil
}

// event records an event on cj, when the shell gives the logic a recorder.
func event(s reconcile.Scope, cj *batchv1.CronJob, typ, reason, note string) {
	if s.Recorder != nil {
		s.Recorder.Eventf(cj, nil, typ, reason, reason, "%s", note)
	}
}
