package ownership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
)

// FightingError says that the library stopped writing an object for a while because
// someone else keeps undoing its writes: another controller, a mutating webhook, or a
// default the API server applies that the desired object contradicts. Writing again at
// once would only feed the fight, so the caller should wait RetryAfter; the reconcile
// shell does so by itself.
type FightingError struct {
	// Kind, Namespace and Name name the object fought over.
	Kind, Namespace, Name string
	// Fields are the fields that kept being undone, "path: live → desired" as in a diff.
	Fields []string
	// Managers are the other field managers that own those fields; none when the server
	// itself rewrites them (a mutating webhook, defaulting).
	Managers []string
	// Admission says that the fields are undone as each write is admitted (a mutating
	// webhook, defaulting), not by writes of someone else's: the API server records such a
	// rewrite under the field manager of the write it rewrites, Self, so there is no other
	// manager to name.
	Admission bool
	// Self is the library's own field manager.
	Self string
	// NoOp says that the writes changed nothing: what is written is not what the server
	// keeps.
	NoOp bool
	// Writes is how many writes of the same desired object it took to notice.
	Writes int
	// RetryAfter is how long writes of the same desired object are held back.
	RetryAfter time.Duration
}

// Error names who keeps undoing the writes (the other field managers, or the API server's
// admission), the object, how many reverts in a row, and the fields, without the back-off.
func (e *FightingError) Error() string {
	who := "someone else"
	switch {
	case len(e.Managers) > 0:
		who = "field manager " + strings.Join(e.Managers, ", ")
	case e.Admission:
		who = fmt.Sprintf("the API server's admission (a mutating webhook or defaulting rewrites each write; the rewrite is recorded under field manager %s, the writer's own)", e.Self)
	}
	// No back-off in the message: it ends up in the owner's status, and a countdown there
	// would make every reconcile write it, the very loop this error is to stop.
	return fmt.Sprintf("%s keeps undoing the writes to %s %s/%s (%d in a row): %s; writes held back",
		who, e.Kind, e.Namespace, e.Name, e.Writes, strings.Join(e.Fields, "; "))
}

// IsFighting reports whether err says that writes to an object are held back because of a
// fight (see FightingError).
func IsFighting(err error) bool {
	var f *FightingError
	return errors.As(err, &f)
}

// FightBackoff returns how long err says to wait before writing again, if it is a fight.
func FightBackoff(err error) (time.Duration, bool) {
	var f *FightingError
	if !errors.As(err, &f) {
		return 0, false
	}
	return f.RetryAfter, true
}

// watchedApply applies want over live and reports a fight when this apply puts back what
// someone undid once too often; while the fight's back-off lasts it applies nothing and
// returns the live object with a *FightingError. A changed desired object (reshaped) is
// never a fight: that is a resize or a rollout.
func watchedApply[T client.Object](ctx context.Context, w Writer, owner client.Object, want, live T, gvk schema.GroupVersionKind, intent string, reshaped bool, diffs []string) (T, Result, error) {
	var zero T
	c, children := w.Client, w.fights()
	result := Result{Action: Updated, Diff: strings.Join(diffs, "\n")}
	now := time.Now()
	if children == nil { // a Writer filled in by hand: no detector to consult
		updated, err := apply(ctx, w, want, gvk, intent, live.GetUID())
		if err != nil {
			return zero, result, err
		}
		telemetry.Wrote(gvk.Kind, telemetry.Update, updated.GetResourceVersion() != live.GetResourceVersion())
		if !reshaped {
			w.recordDrift(owner, updated, gvk.Kind, result.Diff)
		}
		return updated, result, nil
	}
	if !reshaped {
		if wait, report, held := children.Hold(live.GetUID(), intent, now); held {
			telemetry.BackedOff.WithLabelValues(gvk.Kind, telemetry.Update).Inc()
			f := &FightingError{Kind: gvk.Kind, Namespace: live.GetNamespace(), Name: live.GetName(), Fields: diffs}
			if detected, ok := report.(*FightingError); ok {
				*f = *detected
			}
			f.RetryAfter = wait
			return live, Result{Action: Unchanged, Diff: result.Diff}, f
		}
	}
	// Who holds the fields now is in the managedFields of a fresh read (the cache strips
	// them), and gone once this apply takes the fields back: read them first, only when
	// this apply decides a fight.
	var managers []string
	var mine bool // the fields are recorded as the library's own: rewritten on admission
	if !reshaped && children.Decisive(live.GetUID(), intent, result.Diff, now) {
		fresh := newLike(want)
		if err := readLive(ctx, c, gvk, client.ObjectKeyFromObject(live), fresh); err == nil {
			if len(drift(want, fresh)) == 0 {
				// The API server already holds what is desired: the cache was behind
				// this manager's own last write, which is no undoing by anyone.
				return fresh, Result{Action: Unchanged}, nil
			}
			paths := fight.Paths(result.Diff)
			managers = fight.Managers(fresh.GetManagedFields(), paths, w.FieldOwner)
			mine = slices.Contains(fight.Managers(fresh.GetManagedFields(), paths, ""), w.FieldOwner)
		}
	}
	updated, err := apply(ctx, w, want, gvk, intent, live.GetUID())
	if err != nil {
		return zero, result, err
	}
	changed := updated.GetResourceVersion() != live.GetResourceVersion()
	telemetry.Wrote(gvk.Kind, telemetry.Update, changed)
	if reshaped {
		return updated, result, nil
	}
	// The desired object is the one last applied, so someone else changed the live one.
	w.recordDrift(owner, updated, gvk.Kind, result.Diff)
	v := children.Wrote(live.GetUID(), intent, result.Diff, changed, now)
	if !v.Fighting {
		return updated, result, nil
	}
	f := &FightingError{
		Kind: gvk.Kind, Namespace: live.GetNamespace(), Name: live.GetName(), Fields: diffs,
		Managers: managers, Admission: v.NoOp || (len(managers) == 0 && mine), Self: w.FieldOwner,
		NoOp: v.NoOp, Writes: v.Writes, RetryAfter: v.Backoff,
	}
	children.Attach(live.GetUID(), f)
	reportFight(ctx, w, owner, f)
	return updated, result, f
}

// reportFight counts a fight, logs it and records a Warning event on owner, when w has a
// recorder.
func reportFight(ctx context.Context, w Writer, owner client.Object, f *FightingError) {
	telemetry.Fights.WithLabelValues(f.Kind, telemetry.Update).Inc()
	log.FromContext(ctx).Info("fight detected: backing off", "kind", f.Kind, "name", f.Name,
		"fields", f.Fields, "managers", f.Managers, "admission", f.Admission, "writes", f.Writes, "retryAfter", f.RetryAfter)
	if r := w.Recorder; r != nil {
		regarding := owner.DeepCopyObject().(client.Object)
		regarding.SetResourceVersion("")
		r.Eventf(regarding, nil, corev1.EventTypeWarning, "Fighting", "Ensure", "%s", f.Error())
	}
}
