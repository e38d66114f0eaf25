package jobs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/jobs"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
)

func TestStartJobFollowsTheConcurrencyPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  jobs.ConcurrencyPolicy
		running bool // a Job of an earlier run is active
		want    jobs.Started
		wantErr string
		exists  []string // the Jobs afterwards, not being deleted
	}{
		{name: "Allow starts the run beside an active Job", policy: jobs.AllowConcurrent, running: true,
			want: jobs.Started{Created: true}, exists: []string{"earlier", "run-24394200"}},
		{name: "the empty policy is Allow", running: true,
			want: jobs.Started{Created: true}, exists: []string{"earlier", "run-24394200"}},
		{name: "Forbid skips the run while a Job is active", policy: jobs.ForbidConcurrent, running: true,
			want: jobs.Started{Skipped: []string{"earlier"}}, exists: []string{"earlier"}},
		{name: "Forbid starts the run when none is active", policy: jobs.ForbidConcurrent,
			want: jobs.Started{Created: true}, exists: []string{"run-24394200"}},
		{name: "Replace deletes the active Job, then starts the run", policy: jobs.ReplaceConcurrent, running: true,
			want: jobs.Started{Created: true, Replaced: []string{"earlier"}}, exists: []string{"run-24394200"}},
		{name: "an unknown policy starts nothing", policy: "Sometimes", running: true,
			wantErr: `unknown concurrency policy "Sometimes"`, exists: []string{"earlier"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, owner := clustertest.Setup(t, cp(t))
			w := clustertest.Writer(c)
			var active []batchv1.Job
			if tc.running {
				active = append(active, ownedJob(t, c, owner, "earlier", jobs.Active, scheduled.Add(-time.Hour)))
			}
			job := jobs.New(owner.Namespace, "run", scheduled, jobTemplate(), nil)
			got, err := jobs.Start(t.Context(), w, owner, job, active, tc.policy)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got.Job != nil {
				if got.Job.Name != "run-24394200" || !ownership.IsControlledBy(got.Job, owner) {
					t.Errorf("started %s, controlled by %v", got.Job.Name, got.Job.OwnerReferences)
				}
				got.Job = nil
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Start (-want +got):\n%s", d)
			}
			left, err := jobs.List(t.Context(), c, owner, nil)
			if err != nil {
				t.Fatal(err)
			}
			var exist []string
			for _, j := range left {
				if j.DeletionTimestamp == nil {
					exist = append(exist, j.Name)
				}
			}
			if d := cmp.Diff(tc.exists, exist); d != "" {
				t.Errorf("jobs afterwards (-want +got):\n%s", d)
			}
		})
	}
}

func TestStartJobStartsEachRunOnce(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	w := clustertest.Writer(c)
	job := func() *batchv1.Job { return jobs.New(owner.Namespace, "run", scheduled, jobTemplate(), nil) }
	first, err := jobs.Start(t.Context(), w, owner, job(), nil, jobs.ForbidConcurrent)
	if err != nil || !first.Created {
		t.Fatalf("first start: %+v, %v", first, err)
	}
	counter.Reset()
	// The run's own Job, active or not yet known as such (a lost status write, a restart),
	// is the run already started, whatever the policy.
	for _, active := range [][]batchv1.Job{nil, {*first.Job}} {
		for _, policy := range []jobs.ConcurrencyPolicy{jobs.AllowConcurrent, jobs.ForbidConcurrent, jobs.ReplaceConcurrent} {
			again, err := jobs.Start(t.Context(), w, owner, job(), active, policy)
			if err != nil || again.Created || again.Job == nil || again.Job.UID != first.Job.UID || len(again.Replaced)+len(again.Skipped) > 0 {
				t.Errorf("%s with %d active: %+v, %v; want the first run's Job, nothing done", policy, len(active), again, err)
			}
		}
	}
	if n := counter.Writes(); n != 0 {
		t.Errorf("%d writes starting a run already started", n)
	}
}

func TestStartJobRefusesAJobOfTheRunsNameItDoesNotControl(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	theirs := jobs.New(owner.Namespace, "run", scheduled, jobTemplate(), nil)
	if err := c.Create(t.Context(), theirs); err != nil {
		t.Fatal(err)
	}
	_, err := jobs.Start(t.Context(), clustertest.Writer(c), owner, jobs.New(owner.Namespace, "run", scheduled, jobTemplate(), nil), nil, jobs.AllowConcurrent)
	if !ownership.IsNotControlled(err) {
		t.Errorf("error %v, want a *NotControlledError", err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(theirs), theirs); err != nil || len(theirs.OwnerReferences) > 0 {
		t.Errorf("their Job: %v, owners %v", err, theirs.OwnerReferences)
	}
}

func TestAPeriodicOwnerIsReadyWhateverItsJobsDo(t *testing.T) {
	next := scheduled.Add(time.Hour)
	job := func(name string, state jobs.State, end time.Time) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}}
		switch state {
		case jobs.Succeeded:
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", end), cond(batchv1.JobComplete, "CompletionsReached", end)}
		case jobs.Failed:
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded", end), cond(batchv1.JobFailed, "BackoffLimitExceeded", end)}
		}
		return j
	}
	for _, tc := range []struct {
		name string
		jobs []batchv1.Job
		next time.Time
		want readiness.State
	}{{
		name: "no Job yet",
		next: next,
		want: readiness.State{Available: true, Rollout: readiness.RolloutComplete, Reason: jobs.ReasonNoRunYet,
			Message: "no job has run yet; next run at 2016-05-19T11:00:00Z"},
	}, {
		name: "Jobs running",
		jobs: []batchv1.Job{job("a", jobs.Active, scheduled), job("b", jobs.Active, scheduled), job("c", jobs.Succeeded, scheduled),
			job("d", jobs.Active, scheduled), job("e", jobs.Active, scheduled)},
		want: readiness.State{Available: true, Rollout: readiness.RolloutComplete, Reason: jobs.ReasonJobsActive,
			Message: "4 job(s) running: a, b, d and 1 more"},
	}, {
		name: "the newest finished Job failed",
		jobs: []batchv1.Job{job("old", jobs.Succeeded, scheduled), job("new", jobs.Failed, scheduled.Add(time.Minute))},
		next: next,
		want: readiness.State{Available: true, Rollout: readiness.RolloutComplete, Reason: jobs.ReasonLastRunFailed,
			Message: "job new failed (BackoffLimitExceeded): BackoffLimitExceeded message; next run at 2016-05-19T11:00:00Z"},
	}, {
		name: "the newest finished Job succeeded",
		jobs: []batchv1.Job{job("old", jobs.Failed, scheduled), job("new", jobs.Succeeded, scheduled.Add(time.Minute))},
		want: readiness.State{Available: true, Rollout: readiness.RolloutComplete, Reason: jobs.ReasonLastRunSucceeded,
			Message: "job new succeeded (CompletionsReached): CompletionsReached message"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, jobs.HistoryOf(tc.jobs).Readiness(tc.next)); d != "" {
				t.Errorf("Readiness (-want +got):\n%s", d)
			}
		})
	}
}
