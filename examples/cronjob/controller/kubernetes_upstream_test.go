package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	kbatch "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/examples/cronjob/controller"
	"github.com/reconcilekit/reconcilekit/jobs"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The cases of Kubernetes' TestControllerV2SyncCronJob (kubernetes_cases_upstream_test.go, copied
// as they are) run against this operator: each sets up, on a real API server alone, the
// CronJob, its status and its Job the upstream case gives its controller, reconciles once
// at the case's time, and checks what the upstream test checks: the Jobs created (with a
// controller reference to the CronJob) and deleted, the events and how many are warnings,
// the requeue, an error, lastSuccessfulTime, and the active list the case names.
//
// What a real API server needs that the upstream fakes do not: the job template gets a
// container name and a restart policy (the API server refuses a Job without them); a Job
// that succeeded gets SuccessCriteriaMet before Complete and a start time (the API server
// refuses Complete without them); the CronJob's creationTimestamp, which no client can
// set, is written into etcd behind the API server's back. The upstream requeue includes
// a padding of nextScheduleDelta for clock skews, which the example does not add: the
// requeue compared is the upstream one less it.

// notApplicable are the upstream cases that cannot apply to the example, and why.
var notApplicable = map[string]string{
	"never ran, is time in zone, but TZ is also set in schedule": "the example's schema refuses a schedule that names a time zone " +
		"(spec.timeZone says it), so no such CronJob exists; Kubernetes' own API refuses it on create too, and its controller " +
		"only warns of one stored before that rule",
}

// upstreamDifferences are the upstream expectations the example does not share, each
// changed as the example behaves, and why.
var upstreamDifferences = map[string]struct {
	why    string
	change func(*upstreamCase)
}{
	// The upstream test never compares the active list (its fake CronJob client records no
	// status update from syncCronJob: the comparison is never reached), and its controller
	// does not do what these cases say of it.
	"prev ran but done, is time, create job failed, A": {
		why:    "the Job of the run exists (the create's AlreadyExists), is the CronJob's and runs: it is active, as upstream's controller also records it",
		change: func(tc *upstreamCase) { tc.expectActive = 1 },
	},
	"prev ran but done, is time, job not present in CJ active status, create job failed, A": {
		why:    "the Job of the run exists (the create's AlreadyExists), is the CronJob's and runs: it is active, as upstream's controller also records it",
		change: func(tc *upstreamCase) { tc.expectActive = 1 },
	},
	"do nothing if the namespace is terminating": {
		why: "the Job still running is active; and nothing can be created in a namespace being deleted, which is no error to retry: " +
			"the example waits for its next run (upstream returns an error, without an event)",
		change: func(tc *upstreamCase) { tc.expectActive, tc.expectErr = 1, false },
	},
	"with @every schedule, prev ran but done, long overdue, past deadline": {
		why:    "the Job in the active list has finished and leaves it, as upstream's controller also does: no run is due, none is active",
		change: func(tc *upstreamCase) { tc.expectActive = 0 },
	},
	"set lastsuccessfultime if successfulJobHistoryLimit is zero": {
		why: "a history limit of 0 prunes the Job once its success is recorded, in the same reconcile; upstream's sync() prunes " +
			"right after syncCronJob, which its test calls alone",
		change: func(tc *upstreamCase) { tc.expectDelete = true },
	},
}

// unsetNow is the time the upstream cases that leave now unset (the zero time, year 1)
// run at: an hour after their last run, none due. The API server cannot store a
// condition's transition time at year 1.
var unsetNow = justBeforeTheHour()

// runExists names the upstream cases whose Job create fails with AlreadyExists, with the
// run whose Job exists already: made by an earlier reconcile, its status write lost.
var runExists = map[string]time.Time{
	"prev ran but done, is time, create job failed, A":                                      *topOfTheHour(),
	"prev ran but done, is time, job not present in CJ active status, create job failed, A": *topOfTheHour(),
	"this ran but done, time drifted back, F":                                               {}, // no run is due
}

func TestKubernetesCronJobControllerTable(t *testing.T) {
	if n := len(upstreamCases); n != 74 {
		t.Errorf("%d upstream cases, want the 74 of k8s.io/kubernetes v1.37.1", n)
	}
	for name := range notApplicable {
		if _, ok := upstreamCases[name]; !ok {
			t.Errorf("notApplicable names %q, which is no upstream case", name)
		}
	}
	for name := range upstreamDifferences {
		if _, ok := upstreamCases[name]; !ok {
			t.Errorf("upstreamDifferences names %q, which is no upstream case", name)
		}
	}
	cp := reconciletest.StartAPIServer(t, filepath.Join("..", "config", "crd", "bases"))
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, 0, len(upstreamCases))
	for name := range upstreamCases {
		names = append(names, name)
	}
	slices.Sort(names)
	ran := 0
	for _, name := range names {
		if _, ok := notApplicable[name]; ok {
			continue
		}
		ran++
		tc := upstreamCases[name]
		if d, ok := upstreamDifferences[name]; ok {
			d.change(&tc)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runUpstream(t, cp, scheme, name, tc)
		})
	}
	t.Logf("%d of %d upstream cases run, %d not applicable, %d with an expectation changed", ran, len(upstreamCases), len(notApplicable), len(upstreamDifferences))
}

// upstreamCronJob is the upstream cronJob() as the case changes it, in namespace ns.
func upstreamCronJob(ns string, tc upstreamCase) *batchv1.CronJob {
	template := jobSpec()
	// A real API server needs these.
	template.Template.Spec.Containers[0].Name = "foo"
	template.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "mycronjob", Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule:                   tc.schedule,
			TimeZone:                   tc.timeZone,
			ConcurrencyPolicy:          batchv1.ConcurrencyPolicy(tc.concurrencyPolicy),
			Suspend:                    ptr.To(tc.suspend),
			SuccessfulJobsHistoryLimit: tc.successfulJobsHistoryLimit,
			JobTemplate: kbatch.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"x": "y"}},
				Spec:       template,
			},
		},
	}
	if tc.deadline != noDead {
		cj.Spec.StartingDeadlineSeconds = ptr.To(tc.deadline)
	}
	return cj
}

// runUpstream sets up one upstream case as its runner does, reconciles once, and checks.
func runUpstream(t *testing.T, cp *reconciletest.ControlPlane, scheme *runtime.Scheme, name string, tc upstreamCase) {
	ctx := t.Context()
	admin := cp.Client(t, scheme)
	ns := cp.Namespace(t)
	now := tc.now
	if now.IsZero() {
		now = unsetNow
	}

	cj := upstreamCronJob(ns, tc)
	created := justBeforeTheHour()
	if tc.ranPreviously {
		created = justBeforeThePriorHour()
	}
	if !tc.cronjobCreationTime.IsZero() {
		created = tc.cronjobCreationTime
	}
	if err := admin.Create(ctx, cj); err != nil {
		t.Fatal(err)
	}
	if tc.ranPreviously {
		last := justAfterThePriorHour()
		if !tc.lastScheduleTime.IsZero() {
			last = tc.lastScheduleTime
		}
		job := givenJob(t, admin, cj, tc.jobCreationTime, !tc.stillActive)
		cj.Status.LastScheduleTime = &metav1.Time{Time: last}
		if tc.jobPresentInCJActiveStatus {
			cj.Status.Active = []corev1.ObjectReference{{APIVersion: "batch/v1", Kind: "Job", Namespace: ns, Name: job.Name, UID: job.UID}}
		}
		if err := admin.Status().Update(ctx, cj); err != nil {
			t.Fatal(err)
		}
	}
	if run, ok := runExists[name]; ok && !run.IsZero() {
		givenJob(t, admin, cj, run, false)
	}
	// No client can set a creationTimestamp: etcd can.
	key := fmt.Sprintf("/registry/%s/cronjobs/%s/%s", batchv1.GroupVersion.Group, ns, cj.Name)
	if err := cp.RewriteStored(ctx, key, func(obj map[string]any) {
		obj["metadata"].(map[string]any)["creationTimestamp"] = created.UTC().Format(time.RFC3339)
	}); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(cj), cj); err != nil {
			return err
		}
		if !cj.CreationTimestamp.Time.Equal(created) {
			return fmt.Errorf("creationTimestamp %s, want %s", cj.CreationTimestamp, created)
		}
		return nil
	})
	if apierrors.HasStatusCause(tc.jobCreateError, corev1.NamespaceTerminatingCause) {
		// A namespace being deleted refuses every create; with no namespace controller
		// on an API server alone, it stays so.
		if err := admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		// The admission plugin that refuses learns of the deletion through a watch.
		reconciletest.Eventually(t, func(ctx context.Context) error {
			probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
			if err := admin.Create(ctx, probe, client.DryRunAll); !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return fmt.Errorf("a create in the namespace being deleted: %v", err)
			}
			return nil
		})
	}

	before, err := jobs.List(ctx, admin, cj, nil)
	if err != nil {
		t.Fatal(err)
	}

	// The operator's reconcile, once, at the case's time, its requests counted.
	counter := &reconciletest.Counter{}
	cfg := operator.Track(counter.Wrap(cp.Config)) // its deletes of finished Jobs count in the role check
	if tc.jobGetErr != nil {
		cfg = (&reconciletest.Faults{Verbs: []string{"get"}, Resources: []string{"jobs"}, Rate: 1, Code: http.StatusBadRequest}).Wrap(cfg)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	recorder := events.NewFakeRecorder(100)
	r := controller.New().Reconciler(c, reconcile.WithClock(reconciletest.NewClock(now)), reconcile.WithRecorder(recorder))
	result, err := r.Reconcile(ctx, rtreconcile.Request{NamespacedName: client.ObjectKeyFromObject(cj)})

	if tc.expectErr && err == nil {
		t.Errorf("no error, want one; requeue after %s", result.RequeueAfter)
	} else if !tc.expectErr && err != nil && tc.jobGetErr == nil {
		t.Errorf("error %v, want none", err)
	}
	if tc.expectRequeueAfter {
		if want := tc.expectedRequeueDuration - nextScheduleDelta; result.RequeueAfter != want {
			t.Errorf("requeue after %s, want %s", result.RequeueAfter, want)
		}
	}
	if got, want := counter.Count("delete", "jobs"), b2i(tc.expectDelete); got != want {
		t.Errorf("%d jobs deleted, want %d", got, want)
	}

	// The events: one for each create, delete and completed Job, one for a run skipped
	// (Forbid), and the warnings.
	var got []string
	for len(recorder.Events) > 0 {
		got = append(got, <-recorder.Events)
	}
	want := b2i(tc.expectCreate) + b2i(tc.expectDelete) + b2i(tc.expectCompleted) + tc.expectedWarnings
	if name == "still active, is time, F" {
		want++
	}
	warnings := 0
	for _, e := range got {
		if strings.HasPrefix(e, corev1.EventTypeWarning) {
			warnings++
		}
	}
	if len(got) != want || warnings != tc.expectedWarnings {
		t.Errorf("events %q: %d, %d of them warnings; want %d, %d warnings", got, len(got), warnings, want, tc.expectedWarnings)
	}

	after := &batchv1.CronJob{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(cj), after); err != nil {
		t.Fatal(err)
	}
	if tc.ranPreviously && !tc.stillActive {
		completion := tc.jobCreationTime.Add(10 * time.Second)
		if got := after.Status.LastSuccessfulTime; got == nil || !got.Time.Equal(completion) {
			t.Errorf("status.lastSuccessfulTime %v, want %s", got, completion)
		}
	}
	if len(after.Status.Active) != tc.expectActive {
		t.Errorf("status.active %v, want %d", after.Status.Active, tc.expectActive)
	}
	owned, err := jobs.List(ctx, admin, after, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A create refused (a namespace being deleted) was sent, and created nothing.
	made := 0
	for _, j := range owned {
		if !slices.ContainsFunc(before, func(b kbatch.Job) bool { return b.UID == j.UID }) {
			made++
		}
	}
	if want := b2i(tc.expectCreate); made != want {
		t.Errorf("%d jobs created, want %d", made, want)
	}
	for _, j := range owned {
		ref := metav1.GetControllerOf(&j)
		if ref == nil || ref.APIVersion != batchv1.GroupVersion.String() || ref.Kind != "CronJob" || ref.Name != cj.Name || ref.UID != cj.UID {
			t.Errorf("job %s is controlled by %+v, want the CronJob", j.Name, ref)
		}
	}
}

// givenJob creates the Job of cj's run scheduled at run, controlled by cj, finished with
// success when finished (completed ten seconds after run, as the upstream case's Job), or
// running.
func givenJob(t *testing.T, c client.Client, cj *batchv1.CronJob, run time.Time, finished bool) *kbatch.Job {
	t.Helper()
	job := controller.Job(cj, run)
	if err := ownership.SetController(cj, job, c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if !finished {
		return job
	}
	end := metav1.NewTime(run.Add(10 * time.Second))
	start := metav1.NewTime(run)
	if start.IsZero() {
		start = metav1.NewTime(end.Add(-time.Second))
	}
	job.Status = kbatch.JobStatus{StartTime: &start, CompletionTime: &end, Succeeded: 1, Conditions: []kbatch.JobCondition{
		{Type: kbatch.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end},
		{Type: kbatch.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end},
	}}
	if err := c.Status().Update(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	return job
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
