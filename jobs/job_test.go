package jobs_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/jobs"
	"github.com/reconcilekit/reconcilekit/ownership"
)

var scheduled = time.Date(2016, 5, 19, 10, 0, 0, 0, time.UTC)

func TestJobNameIsTheRunsMinuteSinceTheEpoch(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{scheduled, "backup-24394200"},
		// Any instant of the same minute names the same run: a restart recomputes it.
		{scheduled.Add(59 * time.Second), "backup-24394200"},
		{scheduled.Add(time.Minute), "backup-24394201"},
		// The same instant in another zone is the same run.
		{scheduled.In(time.FixedZone("UTC+2", 2*3600)), "backup-24394200"},
	} {
		if got := jobs.Name("backup", tc.at); got != tc.want {
			t.Errorf("Name(backup, %s) = %s, want %s", tc.at, got, tc.want)
		}
	}
}

func jobTemplate() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"x": "y"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"foo": "bar"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "run", Image: "busybox", Command: []string{"true"}}}},
		}},
	}
}

func TestJobCarriesTheTemplateTheRunAndTheOwnersLabels(t *testing.T) {
	owner := map[string]string{"app.kubernetes.io/instance": "backup"}
	template := jobTemplate()
	job := jobs.New("ns", "backup", scheduled, template, owner)
	if job.Name != "backup-24394200" || job.Namespace != "ns" {
		t.Errorf("Job is %s/%s, want ns/backup-24394200", job.Namespace, job.Name)
	}
	wantLabels := map[string]string{"a": "b", "app.kubernetes.io/instance": "backup"}
	if d := cmp.Diff(wantLabels, job.Labels); d != "" {
		t.Errorf("Job labels (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"foo": "bar", "app.kubernetes.io/instance": "backup"}, job.Spec.Template.Labels); d != "" {
		t.Errorf("pod labels (-want +got):\n%s", d)
	}
	if got, ok := jobs.ScheduledTime(job); !ok || !got.Equal(scheduled) || job.Annotations["x"] != "y" {
		t.Errorf("annotations %v: want x=y and the scheduled time %s", job.Annotations, scheduled)
	}
	pod := job.Spec.Template.Spec
	if sc := pod.SecurityContext; sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) != jobs.User {
		t.Errorf("pod security context %+v, want restricted as user %d", sc, jobs.User)
	}
	if template.Spec.Template.Spec.SecurityContext != nil || len(template.Spec.Template.Labels) != 1 {
		t.Error("Job changed the template it was given")
	}

	// A template that sets its pods' security itself keeps it.
	own := jobTemplate()
	own.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](4242)}
	if sc := jobs.New("ns", "backup", scheduled, own, nil).Spec.Template.Spec.SecurityContext; ptr.Deref(sc.RunAsUser, 0) != 4242 || sc.RunAsNonRoot != nil {
		t.Errorf("pod security context %+v, want the template's own", sc)
	}
}

func TestJobsPodsAreAdmittedWhereRestrictedIsEnforced(t *testing.T) {
	c, _, _ := clustertest.Setup(t, cp(t))
	ns := cp(t).RestrictedNamespace(t)
	job := jobs.New(ns, "backup", scheduled, jobTemplate(), nil)
	// The API server checks a pod template against the namespace's level and warns;
	// a Pod of the same spec is what it would refuse.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Spec: job.Spec.Template.Spec}
	if err := c.Create(t.Context(), pod, client.DryRunAll); err != nil {
		t.Errorf("a pod of the Job's template is refused: %v", err)
	}
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
}

// cond is a true Job condition of typ.
func cond(typ batchv1.JobConditionType, reason string, at time.Time) batchv1.JobCondition {
	c := batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
	if reason != "" {
		c.Message = reason + " message"
	}
	return c
}

func TestJobOutcomeFollowsTheJobConditions(t *testing.T) {
	at := scheduled.Add(time.Minute)
	for _, tc := range []struct {
		name   string
		status batchv1.JobStatus
		want   jobs.Outcome
	}{{
		name:   "a Job without conditions is active, from its start",
		status: batchv1.JobStatus{Active: 1, StartTime: &metav1.Time{Time: scheduled}},
		want:   jobs.Outcome{State: jobs.Active, Reason: "Running", Message: "1 active, 0 succeeded, 0 failed pods", Time: scheduled},
	}, {
		name:   "a suspended Job is active, and says it is suspended",
		status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{cond(batchv1.JobSuspended, "JobSuspended", at)}},
		want:   jobs.Outcome{State: jobs.Active, Reason: "Suspended", Message: "JobSuspended message"},
	}, {
		name:   "SuccessCriteriaMet decides success while the pods terminate",
		status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", at)}},
		want:   jobs.Outcome{State: jobs.Succeeded, Reason: "CompletionsReached", Message: "CompletionsReached message", Time: at},
	}, {
		name: "Complete finishes it, at its completion time",
		status: batchv1.JobStatus{CompletionTime: &metav1.Time{Time: at.Add(time.Second)}, Conditions: []batchv1.JobCondition{
			cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", at), cond(batchv1.JobComplete, "CompletionsReached", at.Add(2*time.Second))}},
		want: jobs.Outcome{State: jobs.Succeeded, Finished: true, Reason: "CompletionsReached", Message: "CompletionsReached message", Time: at.Add(time.Second)},
	}, {
		name:   "FailureTarget decides failure while the pods terminate",
		status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded", at)}},
		want:   jobs.Outcome{State: jobs.Failed, Reason: "BackoffLimitExceeded", Message: "BackoffLimitExceeded message", Time: at},
	}, {
		name: "Failed finishes it",
		status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			cond(batchv1.JobFailureTarget, "DeadlineExceeded", at), cond(batchv1.JobFailed, "DeadlineExceeded", at.Add(time.Second))}},
		want: jobs.Outcome{State: jobs.Failed, Finished: true, Reason: "DeadlineExceeded", Message: "DeadlineExceeded message", Time: at.Add(time.Second)},
	}, {
		name: "a failure is never hidden by a success",
		status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			cond(batchv1.JobComplete, "", at), cond(batchv1.JobFailed, "", at)}},
		want: jobs.Outcome{State: jobs.Failed, Finished: true, Reason: "Failed", Time: at},
	}, {
		name: "conditions that are not True decide nothing",
		status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse},
			{Type: batchv1.JobFailed, Status: corev1.ConditionUnknown}}},
		want: jobs.Outcome{State: jobs.Active, Reason: "Running", Message: "0 active, 0 succeeded, 0 failed pods"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := jobs.OutcomeOf(&batchv1.Job{Status: tc.status})
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("OutcomeOf (-want +got):\n%s", d)
			}
		})
	}
}

// finish gives the live Job j a finished status through the status subresource, as the
// Job controller would: started at started, with the condition that decides the verdict
// and the one that finishes it, which the API server requires together.
func finish(t *testing.T, c client.Client, j *batchv1.Job, state jobs.State, started time.Time) {
	t.Helper()
	j.Status.StartTime = &metav1.Time{Time: started}
	end := started.Add(10 * time.Second)
	switch state {
	case jobs.Succeeded:
		j.Status.CompletionTime = &metav1.Time{Time: end}
		j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", end), cond(batchv1.JobComplete, "CompletionsReached", end)}
	case jobs.Failed:
		j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded", end), cond(batchv1.JobFailed, "BackoffLimitExceeded", end)}
	default:
		j.Status.Active = 1
	}
	if err := c.Status().Update(t.Context(), j); err != nil {
		t.Fatalf("giving job %s a %s status: %v", j.Name, state, err)
	}
}

func TestTheAPIServerRefusesCompleteWithoutSuccessCriteriaMet(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	j := jobs.New(owner.Namespace, "run", scheduled, jobTemplate(), nil)
	if err := c.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	j.Status.StartTime = &metav1.Time{Time: scheduled}
	j.Status.CompletionTime = &metav1.Time{Time: scheduled.Add(time.Second)}
	j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete, "", scheduled)}
	err := c.Status().Update(t.Context(), j.DeepCopy())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "SuccessCriteriaMet") {
		t.Errorf("Complete without SuccessCriteriaMet: %v, want Invalid naming SuccessCriteriaMet", err)
	}
	finish(t, c, j, jobs.Succeeded, scheduled)
	live := &batchv1.Job{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(j), live); err != nil {
		t.Fatal(err)
	}
	if o := jobs.OutcomeOf(live); o.State != jobs.Succeeded || !o.Finished || !o.Time.Equal(scheduled.Add(10*time.Second)) {
		t.Errorf("outcome of the live Job %+v, want finished, succeeded at %s", o, scheduled.Add(10*time.Second))
	}
}

// ownedJob creates a Job controlled by owner, named name, with the given outcome, started
// at started.
func ownedJob(t *testing.T, c client.Client, owner client.Object, name string, state jobs.State, started time.Time) batchv1.Job {
	t.Helper()
	j := jobs.New(owner.GetNamespace(), "x", started, jobTemplate(), map[string]string{"owner": owner.GetName()})
	j.Name = name
	if err := ownership.SetController(owner, j, c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	finish(t, c, j, state, started)
	return *j
}

func names(jobs []batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

func TestHistorySortsTheOwnersJobsOldestFirst(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	ownedJob(t, c, owner, "ok-new", jobs.Succeeded, scheduled)
	ownedJob(t, c, owner, "ok-old", jobs.Succeeded, scheduled.Add(-time.Hour))
	ownedJob(t, c, owner, "failed", jobs.Failed, scheduled.Add(-2*time.Hour))
	ownedJob(t, c, owner, "running", jobs.Active, scheduled.Add(time.Hour))
	// Someone else's Job in the namespace is no part of the history.
	other := jobs.New(owner.Namespace, "other", scheduled, jobTemplate(), map[string]string{"owner": owner.Name})
	if err := c.Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	owned, err := jobs.List(t.Context(), c, owner, map[string]string{"owner": owner.Name})
	if err != nil {
		t.Fatal(err)
	}
	h := jobs.HistoryOf(owned)
	got := [][]string{names(h.Active), names(h.Succeeded), names(h.Failed)}
	if d := cmp.Diff([][]string{{"running"}, {"ok-old", "ok-new"}, {"failed"}}, got); d != "" {
		t.Errorf("active, succeeded, failed (-want +got):\n%s", d)
	}
	if !h.LastScheduled.Equal(scheduled.Add(time.Hour)) || !h.LastSucceeded.Equal(scheduled.Add(10*time.Second)) {
		t.Errorf("last scheduled %s, last succeeded %s", h.LastScheduled, h.LastSucceeded)
	}
}

func TestPruneJobsKeepsTheNewestOfEachVerdict(t *testing.T) {
	type job struct {
		name    string
		state   jobs.State
		started time.Duration // before scheduled
	}
	for _, tc := range []struct {
		name                      string
		jobs                      []job
		keepSucceeded, keepFailed int
		want                      []string
	}{{
		name: "the oldest succeeded beyond the limit go, oldest first; the failed are kept below theirs",
		jobs: []job{{"s1", jobs.Succeeded, 3 * time.Hour}, {"s2", jobs.Succeeded, 2 * time.Hour},
			{"s3", jobs.Succeeded, time.Hour}, {"f1", jobs.Failed, 3 * time.Hour}},
		keepSucceeded: 1, keepFailed: 1,
		want: []string{"s1", "s2"},
	}, {
		name: "a limit of 0 deletes every finished Job of its verdict, never an active one",
		jobs: []job{{"f1", jobs.Failed, 2 * time.Hour}, {"f2", jobs.Failed, time.Hour},
			{"a1", jobs.Active, 4 * time.Hour}, {"s1", jobs.Succeeded, time.Hour}},
		keepSucceeded: jobs.KeepAll, keepFailed: 0,
		want: []string{"f1", "f2"},
	}, {
		name:          "KeepAll keeps all",
		jobs:          []job{{"s1", jobs.Succeeded, 2 * time.Hour}, {"f1", jobs.Failed, time.Hour}},
		keepSucceeded: jobs.KeepAll, keepFailed: jobs.KeepAll,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, owner := clustertest.Setup(t, cp(t))
			var owned []batchv1.Job
			for _, j := range tc.jobs {
				owned = append(owned, ownedJob(t, c, owner, j.name, j.state, scheduled.Add(-j.started)))
			}
			pruned, err := jobs.Prune(t.Context(), clustertest.Writer(c), owner, jobs.HistoryOf(owned), tc.keepSucceeded, tc.keepFailed)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, pruned); d != "" {
				t.Errorf("pruned (-want +got):\n%s", d)
			}
			left, err := jobs.List(t.Context(), c, owner, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range left {
				if slices.Contains(tc.want, j.Name) && j.DeletionTimestamp == nil {
					t.Errorf("job %s is still there", j.Name)
				}
			}
			if len(left) < len(tc.jobs)-len(tc.want) {
				t.Errorf("%d jobs left of %d, %d pruned: more were deleted", len(left), len(tc.jobs), len(tc.want))
			}
		})
	}
}

// TestPruneJobsKubernetesCleanupCases are the cases of TestControllerV2CleanupFinishedJobs
// of Kubernetes' CronJob controller (k8s.io/kubernetes v1.37.1,
// pkg/controller/cronjob/cronjob_controllerv2_test.go), against the history helper.
// Kubernetes deletes through its job control even when creating the next Job fails (a
// quota of Jobs reached): Prune takes no part in creating, so that it prunes then is
// the caller's order (prune first), which examples/cronjob follows and tests.
func TestPruneJobsKubernetesCleanupCases(t *testing.T) {
	justBeforeThePriorHour := scheduled.Add(-time.Hour - time.Minute)
	justBeforeTheHour := scheduled.Add(-time.Minute)
	for _, tc := range []struct {
		name string
		jobs map[string]time.Time // complete, started at
		keep int
		want []string
	}{{
		name: "jobs are still deleted when a cronjob can't create jobs due to jobs quota being reached (avoiding a deadlock)",
		jobs: map[string]time.Time{"finished-job-started-hour-ago": justBeforeThePriorHour, "finished-job-started-minute-ago": justBeforeTheHour},
		keep: 1,
		want: []string{"finished-job-started-hour-ago"},
	}, {
		name: "jobs are not deleted if history limit not reached",
		jobs: map[string]time.Time{"finished-job-started-hour-ago": justBeforeThePriorHour},
		keep: 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, owner := clustertest.Setup(t, cp(t))
			// The quota of the first case: no more Jobs in the namespace.
			quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "jobs"},
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/jobs.batch": resourceOf(len(tc.jobs))}}}
			var owned []batchv1.Job
			for name, started := range tc.jobs {
				owned = append(owned, ownedJob(t, c, owner, name, jobs.Succeeded, started))
			}
			if err := c.Create(t.Context(), quota); err != nil {
				t.Fatal(err)
			}
			pruned, err := jobs.Prune(t.Context(), clustertest.Writer(c), owner, jobs.HistoryOf(owned), tc.keep, jobs.KeepAll)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, pruned); d != "" {
				t.Errorf("pruned (-want +got):\n%s", d)
			}
		})
	}
}

func TestPruneJobsLeavesWhatTheOwnerDoesNotControl(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	mine := ownedJob(t, c, owner, "mine", jobs.Succeeded, scheduled.Add(-time.Hour))
	theirs := jobs.New(owner.Namespace, "x", scheduled, jobTemplate(), nil)
	theirs.Name = "theirs"
	if err := c.Create(t.Context(), theirs); err != nil {
		t.Fatal(err)
	}
	finish(t, c, theirs, jobs.Succeeded, scheduled.Add(-2*time.Hour))
	// A history given a Job the owner does not control: ownership.Delete's rule refuses it.
	pruned, err := jobs.Prune(t.Context(), clustertest.Writer(c), owner, jobs.HistoryOf([]batchv1.Job{*theirs, mine}), 0, 0)
	if !ownership.IsNotControlled(err) {
		t.Errorf("error %v, want one that says theirs is not controlled", err)
	}
	if d := cmp.Diff([]string{"mine"}, pruned); d != "" {
		t.Errorf("pruned (-want +got):\n%s", d)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(theirs), &batchv1.Job{}); err != nil {
		t.Errorf("their job: %v", err)
	}
}

func resourceOf(n int) resource.Quantity { return *resource.NewQuantity(int64(n), resource.DecimalSI) }
