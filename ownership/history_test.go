package ownership_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
)

func TestStartJobFollowsTheConcurrencyPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  ownership.ConcurrencyPolicy
		running bool // a Job of an earlier run is active
		want    ownership.Started
		wantErr string
		exists  []string // the Jobs afterwards, not being deleted
	}{
		{name: "Allow starts the run beside an active Job", policy: ownership.AllowConcurrent, running: true,
			want: ownership.Started{Created: true}, exists: []string{"earlier", "run-24394200"}},
		{name: "the empty policy is Allow", running: true,
			want: ownership.Started{Created: true}, exists: []string{"earlier", "run-24394200"}},
		{name: "Forbid skips the run while a Job is active", policy: ownership.ForbidConcurrent, running: true,
			want: ownership.Started{Skipped: []string{"earlier"}}, exists: []string{"earlier"}},
		{name: "Forbid starts the run when none is active", policy: ownership.ForbidConcurrent,
			want: ownership.Started{Created: true}, exists: []string{"run-24394200"}},
		{name: "Replace deletes the active Job, then starts the run", policy: ownership.ReplaceConcurrent, running: true,
			want: ownership.Started{Created: true, Replaced: []string{"earlier"}}, exists: []string{"run-24394200"}},
		{name: "an unknown policy starts nothing", policy: "Sometimes", running: true,
			wantErr: `unknown concurrency policy "Sometimes"`, exists: []string{"earlier"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, owner := setup(t)
			w := ownership.NewTestWriter(c)
			var active []batchv1.Job
			if tc.running {
				active = append(active, ownedJob(t, c, owner, "earlier", ownership.JobActive, scheduled.Add(-time.Hour)))
			}
			job := ownership.Job(owner.Namespace, "run", scheduled, jobTemplate(), nil)
			got, err := ownership.StartJob(t.Context(), w, owner, job, active, tc.policy)
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
				t.Errorf("StartJob (-want +got):\n%s", d)
			}
			left, err := ownership.ListJobs(t.Context(), c, owner, nil)
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
	c, counter, owner := setup(t)
	w := ownership.NewTestWriter(c)
	job := func() *batchv1.Job { return ownership.Job(owner.Namespace, "run", scheduled, jobTemplate(), nil) }
	first, err := ownership.StartJob(t.Context(), w, owner, job(), nil, ownership.ForbidConcurrent)
	if err != nil || !first.Created {
		t.Fatalf("first start: %+v, %v", first, err)
	}
	counter.Reset()
	// The run's own Job, active or not yet known as such (a lost status write, a restart),
	// is the run already started, whatever the policy.
	for _, active := range [][]batchv1.Job{nil, {*first.Job}} {
		for _, policy := range []ownership.ConcurrencyPolicy{ownership.AllowConcurrent, ownership.ForbidConcurrent, ownership.ReplaceConcurrent} {
			again, err := ownership.StartJob(t.Context(), w, owner, job(), active, policy)
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
	c, _, owner := setup(t)
	theirs := ownership.Job(owner.Namespace, "run", scheduled, jobTemplate(), nil)
	if err := c.Create(t.Context(), theirs); err != nil {
		t.Fatal(err)
	}
	_, err := ownership.StartJob(t.Context(), ownership.NewTestWriter(c), owner, ownership.Job(owner.Namespace, "run", scheduled, jobTemplate(), nil), nil, ownership.AllowConcurrent)
	if !ownership.IsNotControlled(err) {
		t.Errorf("error %v, want a *NotControlledError", err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(theirs), theirs); err != nil || len(theirs.OwnerReferences) > 0 {
		t.Errorf("their Job: %v, owners %v", err, theirs.OwnerReferences)
	}
}

func TestAPeriodicOwnerIsReadyWhateverItsJobsDo(t *testing.T) {
	next := scheduled.Add(time.Hour)
	job := func(name string, state ownership.JobState, end time.Time) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}}
		switch state {
		case ownership.JobSucceeded:
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", end), cond(batchv1.JobComplete, "CompletionsReached", end)}
		case ownership.JobFailed:
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded", end), cond(batchv1.JobFailed, "BackoffLimitExceeded", end)}
		}
		return j
	}
	for _, tc := range []struct {
		name string
		jobs []batchv1.Job
		next time.Time
		want ownership.Readiness
	}{{
		name: "no Job yet",
		next: next,
		want: ownership.Readiness{Available: true, Rollout: ownership.RolloutComplete, Reason: ownership.ReasonNoRunYet,
			Message: "no job has run yet; next run at 2016-05-19T11:00:00Z"},
	}, {
		name: "Jobs running",
		jobs: []batchv1.Job{job("a", ownership.JobActive, scheduled), job("b", ownership.JobActive, scheduled), job("c", ownership.JobSucceeded, scheduled),
			job("d", ownership.JobActive, scheduled), job("e", ownership.JobActive, scheduled)},
		want: ownership.Readiness{Available: true, Rollout: ownership.RolloutComplete, Reason: ownership.ReasonJobsActive,
			Message: "4 job(s) running: a, b, d and 1 more"},
	}, {
		name: "the newest finished Job failed",
		jobs: []batchv1.Job{job("old", ownership.JobSucceeded, scheduled), job("new", ownership.JobFailed, scheduled.Add(time.Minute))},
		next: next,
		want: ownership.Readiness{Available: true, Rollout: ownership.RolloutComplete, Reason: ownership.ReasonLastRunFailed,
			Message: "job new failed (BackoffLimitExceeded): BackoffLimitExceeded message; next run at 2016-05-19T11:00:00Z"},
	}, {
		name: "the newest finished Job succeeded",
		jobs: []batchv1.Job{job("old", ownership.JobFailed, scheduled), job("new", ownership.JobSucceeded, scheduled.Add(time.Minute))},
		want: ownership.Readiness{Available: true, Rollout: ownership.RolloutComplete, Reason: ownership.ReasonLastRunSucceeded,
			Message: "job new succeeded (CompletionsReached): CompletionsReached message"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, ownership.HistoryOf(tc.jobs).Readiness(tc.next)); d != "" {
				t.Errorf("Readiness (-want +got):\n%s", d)
			}
		})
	}
}
