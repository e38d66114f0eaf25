package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// List lists the Jobs owner controls in its namespace (by UID), from c's cache when c is
// the manager's client, narrowed to those with labels when labels is not empty: the labels
// Job gave them, which the manager's cache of Jobs can be restricted to.
func List(ctx context.Context, c client.Reader, owner client.Object, labels map[string]string) ([]batchv1.Job, error) {
	var list batchv1.JobList
	opts := []client.ListOption{client.InNamespace(owner.GetNamespace())}
	if len(labels) > 0 {
		opts = append(opts, client.MatchingLabels(labels))
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(j batchv1.Job) bool { return !ownership.IsControlledBy(&j, owner) }), nil
}

// History is an owner's Jobs sorted by how their runs went, each list oldest first (see
// OldestFirst): what a periodic owner reports and prunes.
type History struct {
	// Active are the Jobs not finished (Outcome.Finished false): running, suspended,
	// or decided with pods still terminating.
	Active []batchv1.Job
	// Succeeded and Failed are the finished Jobs by their verdict.
	Succeeded, Failed []batchv1.Job
	// LastScheduled is the latest ScheduledTime of them all, zero when none has one.
	LastScheduled time.Time
	// LastSucceeded is the latest time a Job of them succeeded (Outcome.Time), zero when
	// none has: Kubernetes' CronJob status.lastSuccessfulTime.
	LastSucceeded time.Time
}

// HistoryOf sorts jobs, which the caller has found controlled by the owner (List), by
// how their runs went.
func HistoryOf(jobs []batchv1.Job) History {
	var h History
	for _, j := range jobs {
		o := OutcomeOf(&j)
		switch {
		case !o.Finished:
			h.Active = append(h.Active, j)
		case o.State == Succeeded:
			h.Succeeded = append(h.Succeeded, j)
			if o.Time.After(h.LastSucceeded) {
				h.LastSucceeded = o.Time
			}
		default:
			h.Failed = append(h.Failed, j)
		}
		if t, ok := ScheduledTime(&j); ok && t.After(h.LastScheduled) {
			h.LastScheduled = t
		}
	}
	for _, l := range [][]batchv1.Job{h.Active, h.Succeeded, h.Failed} {
		slices.SortStableFunc(l, OldestFirst)
	}
	return h
}

// OldestFirst orders Jobs as Kubernetes' CronJob controller prunes them: by
// status.startTime, a Job not yet started after every started one, and by name when the
// times are equal. A comparison function for slices.SortFunc.
func OldestFirst(a, b batchv1.Job) int {
	switch sa, sb := a.Status.StartTime, b.Status.StartTime; {
	case sa == nil && sb != nil:
		return 1
	case sa != nil && sb == nil:
		return -1
	case sa != nil && !sa.Equal(sb):
		return sa.Compare(sb.Time)
	}
	return cmp.Compare(a.Name, b.Name)
}

// KeepAll is a history limit that keeps every finished Job of its kind.
const KeepAll = -1

// Prune deletes the finished Jobs of h beyond the newest keepSucceeded that succeeded
// and the newest keepFailed that failed, oldest first, each with ownership.Delete's rules (the cached
// object's UID as precondition, background propagation, a Job already being deleted left
// alone); a negative limit (KeepAll) keeps every Job of its kind, and Jobs still active are
// never deleted. It returns the names of the Jobs deleted and, joined, the errors of those
// it could not delete: one refusal does not keep the others from being pruned, so a quota
// of Jobs reached never blocks the pruning that would free it.
//
// A periodic owner prunes before it starts a new Job, as Kubernetes' CronJob does, so that
// a namespace full of finished Jobs never stops the next run.
func Prune(ctx context.Context, w ownership.Writer, owner client.Object, h History, keepSucceeded, keepFailed int) ([]string, error) {
	var pruned []string
	var errs []error
	for _, kind := range []struct {
		jobs []batchv1.Job
		keep int
	}{{h.Succeeded, keepSucceeded}, {h.Failed, keepFailed}} {
		if kind.keep < 0 {
			continue
		}
		for _, j := range kind.jobs[:max(len(kind.jobs)-kind.keep, 0)] {
			result, err := ownership.Delete(ctx, w, owner, &j)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("pruning job %s: %w", j.Name, err))
			case result.Action == ownership.Deleted:
				pruned = append(pruned, j.Name)
			}
		}
	}
	return pruned, errors.Join(errs...)
}

// ConcurrencyPolicy says what a periodic owner does when a run comes due while Jobs of
// earlier runs are active: Kubernetes' CronJob spec.concurrencyPolicy.
type ConcurrencyPolicy string

// The concurrency policies, as Kubernetes' CronJob spells them.
const (
	// AllowConcurrent starts the run beside the active Jobs.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the run while a Job is active: the run is not made up later.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the active Jobs, then starts the run.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// Started is what Start did.
type Started struct {
	// Job is the Job of the run, the live one; nil when the run was skipped.
	Job *batchv1.Job
	// Created is true when Start created it, false when it existed already (an earlier
	// reconcile created it, and its status write was lost or not yet cached).
	Created bool
	// Skipped names the active Jobs that made ForbidConcurrent skip the run.
	Skipped []string
	// Replaced names the active Jobs ReplaceConcurrent deleted.
	Replaced []string
}

// Start starts the run that job (made by Job) describes, by policy, given active, the
// owner's active Jobs (History.Active):
//   - the Job of the run itself, among active or found by its name, is the run already
//     started: nothing is sent, and nothing replaced;
//   - ForbidConcurrent with any other Job active skips the run (Started.Skipped);
//   - ReplaceConcurrent deletes every other active Job first (ownership.Delete's rules), and stops at
//     the first it cannot delete: the run is not started beside it;
//   - the Job is then created, never updated (ownership.Ensure with ownership.CreateOnly): a Job of its name
//     that the owner does not control is a *NotControlledError, as for ownership.Ensure.
//
// An unknown policy is an error and starts nothing; the empty policy is AllowConcurrent,
// the API's default.
func Start(ctx context.Context, w ownership.Writer, owner client.Object, job *batchv1.Job, active []batchv1.Job, policy ConcurrencyPolicy) (Started, error) {
	switch policy {
	case "", AllowConcurrent, ForbidConcurrent, ReplaceConcurrent:
	default:
		return Started{}, fmt.Errorf("unknown concurrency policy %q: Allow, Forbid or Replace", policy)
	}
	var others []batchv1.Job
	for _, j := range active {
		if j.Name == job.Name {
			return Started{Job: &j}, nil
		}
		others = append(others, j)
	}
	// The run's Job may exist without being in active: finished already, or not yet in a
	// cache that lags behind the create. The cache, then the API server through the create.
	existing := &batchv1.Job{}
	if err := w.Client.Get(ctx, client.ObjectKeyFromObject(job), existing); err == nil {
		if !ownership.IsControlledBy(existing, owner) {
			return Started{}, &ownership.NotControlledError{Kind: "Job", Namespace: existing.Namespace, Name: existing.Name, Controller: metav1.GetControllerOf(existing)}
		}
		return Started{Job: existing}, nil
	} else if !apierrors.IsNotFound(err) {
		return Started{}, err
	}
	var s Started
	switch {
	case policy == ForbidConcurrent && len(others) > 0:
		for _, j := range others {
			s.Skipped = append(s.Skipped, j.Name)
		}
		return s, nil
	case policy == ReplaceConcurrent:
		for _, j := range others {
			result, err := ownership.Delete(ctx, w, owner, &j)
			if err != nil {
				return s, fmt.Errorf("replacing job %s: %w", j.Name, err)
			}
			if result.Action == ownership.Deleted {
				s.Replaced = append(s.Replaced, j.Name)
			}
		}
	}
	live, result, err := ownership.Ensure(ctx, w, owner, job, ownership.CreateOnly())
	if err != nil {
		return s, err
	}
	s.Job, s.Created = live, result.Action == ownership.Created
	return s, nil
}

// Reasons of a periodic owner's readiness (History.Readiness).
const (
	// ReasonJobsActive: Jobs of the owner run.
	ReasonJobsActive = "JobsActive"
	// ReasonLastRunSucceeded: no Job runs, and the newest finished one succeeded.
	ReasonLastRunSucceeded = "LastRunSucceeded"
	// ReasonLastRunFailed: no Job runs, and the newest finished one failed.
	ReasonLastRunFailed = "LastRunFailed"
	// ReasonNoRunYet: the owner has no Job yet.
	ReasonNoRunYet = "NoRunYet"
)

// Readiness reports a periodic owner (one that runs Jobs on a schedule) for its Available,
// Progressing and Degraded conditions (readiness.State.Mark), so that kstatus and
// `kubectl wait --for=condition=Ready` read it by one rule: a periodic owner is Ready once
// it has done what is due, whatever its Jobs are doing.
//
// The rule: Available is True and the rollout Complete, always, with the reason of what
// the Jobs do (ReasonJobsActive and the names running, else the newest finished Job's
// ReasonLastRunSucceeded or ReasonLastRunFailed with its reason and message, else
// ReasonNoRunYet), and next, the next run, in the message when not zero.
//
// Why: a Job that runs is the owner at work, not a change rolling out, and a run that
// failed is over: the next run may succeed, and nothing the owner could do would change
// the past one. Were either to make the owner not Ready, an owner whose Jobs run most of
// the time, or whose last run failed, would never be Ready and every `kubectl wait` on it
// would time out. What does make a periodic owner not Ready is its own state: a schedule
// that does not parse, a Job it cannot create or prune, a name taken by someone else's
// Job. Its logic reports those as any reconcile does (Stalled, or an error retried), and
// the reconcile shell turns them into Ready False. A failed run is reported in the reason,
// in status (lastSuccessfulTime falls behind) and by an event, for alerts to read.
func (h History) Readiness(next time.Time) readiness.State {
	r := readiness.State{Available: true, Rollout: readiness.RolloutComplete}
	switch newest := h.newestFinished(); {
	case len(h.Active) > 0:
		names := make([]string, len(h.Active))
		for i, j := range h.Active {
			names[i] = j.Name
		}
		r.Reason, r.Message = ReasonJobsActive, fmt.Sprintf("%d job(s) running: %s", len(names), joinNames(names))
	case newest == nil:
		r.Reason, r.Message = ReasonNoRunYet, "no job has run yet"
	default:
		o := OutcomeOf(newest)
		r.Reason = ReasonLastRunSucceeded
		if o.State == Failed {
			r.Reason = ReasonLastRunFailed
		}
		r.Message = fmt.Sprintf("job %s %s (%s)", newest.Name, map[State]string{Succeeded: "succeeded", Failed: "failed"}[o.State], o.Reason)
		if o.Message != "" {
			r.Message += ": " + o.Message
		}
	}
	if !next.IsZero() {
		r.Message += "; next run at " + next.UTC().Format(time.RFC3339)
	}
	return r
}

// newestFinished is the finished Job whose verdict is the latest, nil when none is.
func (h History) newestFinished() *batchv1.Job {
	var newest *batchv1.Job
	var at time.Time
	for _, l := range [][]batchv1.Job{h.Succeeded, h.Failed} {
		for i := range l {
			if t := OutcomeOf(&l[i]).Time; newest == nil || t.After(at) || t.Equal(at) && OldestFirst(*newest, l[i]) < 0 {
				newest, at = &l[i], t
			}
		}
	}
	return newest
}

// joinNames joins at most three names, and says how many more there are.
func joinNames(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
