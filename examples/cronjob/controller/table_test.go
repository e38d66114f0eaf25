package controller_test

import (
	"path/filepath"
	"testing"
	"time"

	kbatch "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/examples/cronjob/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// cronJobs is the CronJob controller in the shell, as cmd/main.go declares it, one
// reconcile at a time on an API server alone: no Job controller, no pods, the time the
// case's clock says.
var cronJobs = reconciletest.ReconcilerTests{
	CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
	AddToScheme:    batchv1.AddToScheme,
	Controller:     controller.New(),
	Operator:       operator, // its pruning of finished Jobs counts in the role check
}

// hourly is the CronJob backup, run on the hour under policy, whose last run was at last.
func hourly(policy batchv1.ConcurrencyPolicy, last time.Time) *batchv1.CronJob {
	cj := hello("")
	cj.Name = "backup"
	cj.Spec.Schedule = "0 * * * *"
	cj.Spec.ConcurrencyPolicy = policy
	cj.Status.LastScheduleTime = &metav1.Time{Time: last}
	return cj
}

// runOf is the Job of backup's run at run, controlled by it, as a table writes it: with
// the label the shell's Writer gives every child (ownership.OwnedByLabel).
func runOf(cj *batchv1.CronJob, run time.Time) *kbatch.Job {
	job := controller.Job(cj, run)
	job.Labels[ownership.OwnedByLabel] = "cronjob.batch.tutorial.kubebuilder.io"
	job.OwnerReferences = []metav1.OwnerReference{{APIVersion: batchv1.GroupVersion.String(), Kind: "CronJob", Name: cj.Name,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	return job
}

// succeeded is job with a status that says it succeeded at end, as the Job controller
// writes it: SuccessCriteriaMet before Complete, a start time before the completion time.
func succeeded(job *kbatch.Job, end time.Time) *kbatch.Job {
	at := metav1.Time{Time: end}
	job.Status = kbatch.JobStatus{
		Succeeded: 1, StartTime: &metav1.Time{Time: end.Add(-time.Minute)}, CompletionTime: &at,
		Conditions: []kbatch.JobCondition{
			{Type: kbatch.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: kbatch.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: at},
		},
	}
	return job
}

// running is job with a status that says it runs.
func running(job *kbatch.Job, since time.Time) *kbatch.Job {
	job.Status = kbatch.JobStatus{Active: 1, StartTime: &metav1.Time{Time: since}}
	return job
}

func TestCronJobTable(t *testing.T) {
	now := reconciletest.DefaultNow.Add(30 * time.Second) // 12:00:30, the 12:00 run due
	run, earlier := reconciletest.DefaultNow, reconciletest.DefaultNow.Add(-time.Hour)
	allow, forbid := hourly(batchv1.AllowConcurrent, earlier), hourly(batchv1.ForbidConcurrent, earlier)
	table := cronJobs
	table.Cases = []reconciletest.ReconcilerTestCase{{
		Name:         "a due run creates the Job named after it, and the CronJob waits for the next",
		Object:       hourly(batchv1.AllowConcurrent, earlier),
		Now:          now,
		WantRequests: []string{"create jobs", "patch cronjobs/status"},
		WantObjects:  []client.Object{runOf(allow, run)},
		WantEvents:   []string{"Normal SuccessfulCreate Created job " + runOf(allow, run).Name},
		WantResult:   rtreconcile.Result{RequeueAfter: time.Hour - 30*time.Second},
	}, {
		Name:             "a CronJob that has started its run writes nothing more",
		Object:           hourly(batchv1.AllowConcurrent, earlier),
		Now:              now,
		ReconciledBefore: 1,
		WantObjects:      []client.Object{runOf(allow, run)},
		WantResult:       rtreconcile.Result{RequeueAfter: time.Hour - 30*time.Second},
	}, {
		Name:         "Forbid skips the run while the last one runs",
		Object:       hourly(batchv1.ForbidConcurrent, earlier),
		Given:        []client.Object{running(runOf(forbid, earlier), earlier)},
		Now:          now,
		WantRequests: []string{"patch cronjobs/status"},
		WantObjects:  []client.Object{runOf(forbid, earlier)},
		WantEvents:   []string{"Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid"},
		WantResult:   rtreconcile.Result{RequeueAfter: time.Hour - 30*time.Second},
	}, {
		Name: "a suspended CronJob starts no run",
		Object: func() *batchv1.CronJob {
			cj := hourly(batchv1.AllowConcurrent, earlier)
			cj.Spec.Suspend = ptr.To(true)
			return cj
		}(),
		Now:          now,
		WantRequests: []string{"patch cronjobs/status"},
	}, {
		Name: "a schedule that does not parse stalls the CronJob until its spec changes",
		Object: func() *batchv1.CronJob {
			cj := hourly(batchv1.AllowConcurrent, earlier)
			cj.Spec.Schedule = "every day"
			return cj
		}(),
		Now:          now,
		WantRequests: []string{"patch cronjobs/status"},
		WantEvents:   []string{`Warning InvalidSchedule invalid schedule "every day": expected exactly 5 fields, found 2: [every day]`},
	}, {
		Name:   "a Job of the run's name that someone else made is left alone, and the CronJob says why",
		Object: hourly(batchv1.AllowConcurrent, earlier),
		Given: []client.Object{func() *kbatch.Job {
			job := runOf(allow, run)
			job.OwnerReferences = nil
			return job
		}()},
		Now:          now,
		WantRequests: []string{"patch cronjobs/status"},
		WantObjects: []client.Object{func() *kbatch.Job {
			job := runOf(allow, run)
			job.OwnerReferences = nil
			return job
		}()},
		WantEvents: []string{"Warning JobNameTaken Job " + reconciletest.CaseNamespace + "/" + runOf(allow, run).Name +
			" exists and has no controller; it is left alone: delete it, or rename this CronJob"},
		WantResult: rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		Name: "a succeeded Job beyond the history limit is deleted, the oldest first",
		Object: func() *batchv1.CronJob {
			cj := hourly(batchv1.AllowConcurrent, run)
			cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
			return cj
		}(),
		Given: []client.Object{
			succeeded(runOf(allow, earlier.Add(-time.Hour)), earlier.Add(-time.Hour+time.Minute)),
			succeeded(runOf(allow, earlier), earlier.Add(time.Minute)),
		},
		Now:          now,
		WantRequests: []string{"delete jobs", "patch cronjobs/status"},
		WantObjects:  []client.Object{runOf(allow, earlier)},
		WantEvents:   []string{"Normal SuccessfulDelete Deleted job " + runOf(allow, earlier.Add(-time.Hour)).Name},
		WantResult:   rtreconcile.Result{RequeueAfter: time.Hour - 30*time.Second},
	}}
	table.Run(t)
}
