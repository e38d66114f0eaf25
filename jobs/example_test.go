package jobs_test

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/jobs"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/schedule"
)

// A run's Job is named after the minute it was scheduled for: every reconcile, before or
// after a restart, names the same run the same, and a second create of it fails.
func ExampleName() {
	scheduled := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	fmt.Println(jobs.Name("backup", scheduled))
	fmt.Println(jobs.Name("backup", scheduled.Add(30*time.Second)))
	// Output:
	// backup-31558320
	// backup-31558320
}

// A Job's outcome follows the Job API's conditions: the verdict as soon as it is reached,
// finished once the pods have terminated.
func ExampleOutcomeOf() {
	at := metav1.NewTime(time.Date(2030, 1, 1, 12, 0, 10, 0, time.UTC))
	job := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: at},
	}}}
	o := jobs.OutcomeOf(job)
	fmt.Println(o.State, o.Finished, o.Reason)
	// Output: Failed false BackoffLimitExceeded
}

// The periodic part of a reconcile: the owner's Jobs sorted, the history pruned, the run
// due started by the concurrency policy, and the owner's readiness reported; then it waits
// for the next run. owner stands for the operator's own kind, w and now for the
// reconcile's (reconcile.Scope); examples/cronjob is the whole of it.
func ExampleStart() {
	var (
		ctx      = context.Background()
		w        ownership.Writer
		owner    = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backup"}}
		template batchv1.JobTemplateSpec
		now      = time.Now()
	)
	labels := map[string]string{"app.kubernetes.io/instance": owner.Name}
	owned, err := jobs.List(ctx, w.Client, owner, labels)
	if err != nil {
		return // requeue.Retry(err)
	}
	h := jobs.HistoryOf(owned)
	if _, err := jobs.Prune(ctx, w, owner, h, 3, 1); err != nil {
		return // requeue.Retry(err)
	}
	schedule, err := schedule.ParseCron("0 * * * *")
	if err != nil {
		return // Stalled: no retry can fix it
	}
	due, _ := schedule.Due(h.LastScheduled, owner.CreationTimestamp.Time, now)
	if !due.Run.IsZero() {
		job := jobs.New(owner.Namespace, owner.Name, due.Run, template, labels)
		started, err := jobs.Start(ctx, w, owner, job, h.Active, jobs.ForbidConcurrent)
		if err != nil {
			return // requeue.Retry(err), or Stalled for a *NotControlledError
		}
		fmt.Println("started", started.Job.Name, "skipped", started.Skipped)
	}
	fmt.Println(h.Readiness(due.Next).Reason) // Readiness.Mark(owner), for kstatus and kubectl wait
	fmt.Println(requeue.After(due.Next.Sub(now)))
}
