package reconcile

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Reasons the shell gives the standard conditions when it does not copy one.
const (
	// ReasonReconciled is Ready's reason when nothing is in progress and nothing is wrong.
	ReasonReconciled = "Reconciled"
	// ReasonRetrying is Reconciling's reason while the logic's error is retried.
	ReasonRetrying = "Retrying"
	// ReasonTerminalError is Stalled's reason when the logic returned a terminal error.
	ReasonTerminalError = "TerminalError"
)

// standard holds the standard conditions the logic set, and takes them off the object so
// that the shell can set them in a fixed order after the others.
type standard struct {
	reconciling, stalled *metav1.Condition
}

// strip removes the standard conditions from obj and returns those set to True: the logic
// may set Reconciling or Stalled itself; Ready and Paused are the shell's alone.
func strip(obj conditions.Setter) standard {
	var s standard
	kept := obj.GetConditions()[:0]
	for _, c := range obj.GetConditions() {
		switch {
		case c.Type == conditions.Reconciling && c.Status == metav1.ConditionTrue:
			s.reconciling = &c
		case c.Type == conditions.Stalled && c.Status == metav1.ConditionTrue:
			s.stalled = &c
		case c.Type == conditions.Reconciling, c.Type == conditions.Stalled, c.Type == conditions.Ready, c.Type == Paused:
		default:
			kept = append(kept, c)
		}
	}
	obj.SetConditions(kept)
	return s
}

// markStandard sets Ready, Reconciling and Stalled on obj from the logic's outcome and the
// conditions it set. The rules, in order:
//
//   - Stalled is True when the logic set it, else with the reason and message of the first
//     condition of negative polarity that is True (Degraded, see conditions.NegativePolarity),
//     else when the outcome is terminal.
//   - Otherwise Reconciling is True when the logic set it, else while the logic's error is
//     retried, else with the reason and message of a Progressing condition that is True,
//     else of the first other condition that is not True.
//   - Ready is False with the reason and message of Stalled or Reconciling, whichever is
//     True; True otherwise. Reconciling and Stalled are removed when they are not True.
func markStandard(obj conditions.Setter, s standard, outcome requeue.Outcome) {
	stalled, reconciling := s.stalled, s.reconciling
	if stalled == nil {
		stalled = first(obj, func(c metav1.Condition) bool {
			return conditions.NegativePolarity(c.Type) && c.Status == metav1.ConditionTrue
		})
	}
	if stalled == nil && outcome.IsTerminal() {
		stalled = &metav1.Condition{Reason: ReasonTerminalError, Message: outcome.Err().Error()}
	}
	if stalled == nil && reconciling == nil {
		if err := outcome.Err(); err != nil {
			reconciling = &metav1.Condition{Reason: ReasonRetrying, Message: err.Error()}
		} else if p := conditions.Find(obj, conditions.Progressing); p != nil && p.Status == metav1.ConditionTrue {
			reconciling = p
		} else {
			reconciling = first(obj, func(c metav1.Condition) bool {
				return c.Type != conditions.Progressing && !conditions.NegativePolarity(c.Type) && c.Status != metav1.ConditionTrue
			})
		}
	}

	ready := metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionTrue, Reason: ReasonReconciled}
	why, typ := stalled, conditions.Stalled
	if why == nil {
		why, typ = reconciling, conditions.Reconciling
	}
	if why != nil {
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, why.Reason, why.Message
	}
	conditions.Set(obj, ready)
	if why != nil {
		conditions.Set(obj, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: why.Reason, Message: why.Message})
	}
}

// first returns a copy of obj's first condition that matches, or nil.
func first(obj conditions.Getter, match func(metav1.Condition) bool) *metav1.Condition {
	for _, c := range obj.GetConditions() {
		if match(c) {
			return &c
		}
	}
	return nil
}

// restore puts back the standard conditions of before, for a reconcile that learnt nothing
// (a conflict): its conditions would say nothing new.
func restore(obj, before conditions.Setter) {
	for _, typ := range []string{conditions.Ready, conditions.Reconciling, conditions.Stalled} {
		if c := conditions.Find(before, typ); c != nil {
			conditions.Set(obj, *c)
		}
	}
}

// stamp gives every condition that is new or whose status changed since before the time
// now, and every other its old transition time: one clock for everything the logic set.
func stamp(obj, before conditions.Setter, now time.Time) {
	at := metav1.NewTime(now.Truncate(time.Second))
	conds := obj.GetConditions()
	for i := range conds {
		if old := conditions.Find(before, conds[i].Type); old != nil && old.Status == conds[i].Status {
			conds[i].LastTransitionTime = old.LastTransitionTime
		} else {
			conds[i].LastTransitionTime = at
		}
	}
}

// transitions returns the events the standard conditions' changes call for: Warning when
// the object stalled (or stalled for a new reason), and Normal Ready when it became Ready
// while recovering, that is after a Warning: it had stalled or a reconcile had failed. A new
// object's first readiness, and its return after an ordinary change such as a rollout, are
// told by the Ready condition alone: an event for each would cost the API server one more
// write per object, as much as a status write, to say what every client already reads.
func transitions(obj, before conditions.Getter, recovering bool) []shellEvent {
	var out []shellEvent
	// A terminal error has its own event, ReconcileError.
	if now := conditions.Find(obj, conditions.Stalled); now != nil && now.Reason != ReasonTerminalError {
		if old := conditions.Find(before, conditions.Stalled); old == nil || old.Status != now.Status || old.Reason != now.Reason {
			out = append(out, shellEvent{corev1.EventTypeWarning, now.Reason, now.Message})
		}
	}
	if conditions.IsTrue(obj, conditions.Ready) && !conditions.IsTrue(before, conditions.Ready) && recovering {
		out = append(out, shellEvent{corev1.EventTypeNormal, "Ready", "the object is ready again"})
	}
	return out
}

// warned reports whether obj's conditions are those of an object the shell records a
// Warning for: stalled, or retrying a failed reconcile.
func warned(obj conditions.Getter) bool {
	if conditions.IsTrue(obj, conditions.Stalled) {
		return true
	}
	r := conditions.Find(obj, conditions.Reconciling)
	return r != nil && r.Status == metav1.ConditionTrue && r.Reason == ReasonRetrying
}

// warnings holds the objects the shell recorded a Warning for that have not been Ready
// since: on their way back they may pass through Reconciling (a Deployment created again
// rolls out), so their conditions alone no longer show the Warning when Ready comes. Only
// such objects are held, each until it is Ready or gone; a restart forgets them, and with
// them at most one Normal event each.
type warnings struct {
	mu   sync.Mutex
	keys map[types.NamespacedName]struct{}
}

// after records the change of key's conditions from before to obj, and reports whether
// key was recovering from a Warning: held, or warned in before (the memory of a process
// that restarted since). It is held from then on until obj is Ready.
func (w *warnings) after(key types.NamespacedName, before, obj conditions.Getter) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, recovering := w.keys[key]
	recovering = recovering || warned(before)
	switch {
	case conditions.IsTrue(obj, conditions.Ready):
		delete(w.keys, key)
	case recovering || warned(obj):
		if w.keys == nil {
			w.keys = map[types.NamespacedName]struct{}{}
		}
		w.keys[key] = struct{}{}
	}
	return recovering
}

// forget drops key, deleted.
func (w *warnings) forget(key types.NamespacedName) {
	w.mu.Lock()
	delete(w.keys, key)
	w.mu.Unlock()
}

// shellEvent is an event the shell records on the object it reconciles.
type shellEvent struct{ kind, reason, note string }
