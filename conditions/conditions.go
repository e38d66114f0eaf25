// Package conditions sets and reads the status conditions of Kubernetes objects.
//
// It works on any object that exposes its []metav1.Condition through Getter and
// Setter, and on a bare slice through List. Setters report whether anything
// changed, so that a reconciler writes status only when it must; transition times
// come from the reconcile shell's clock (or the caller), truncated to whole seconds so that they survive a
// round trip through the API server; and a bad reason shows up on the object
// instead of failing the status write.
package conditions

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// Standard condition types. Ready, Reconciling and Stalled are the ones kstatus (and so
// Flux, Argo CD and kubectl wait users) reads; the reconcile shell keeps them right on every
// object it writes.
const (
	// Ready summarizes whether the object does what it is for: True when it is where its
	// spec says, False with the reason of Stalled or Reconciling otherwise.
	Ready = "Ready"
	// Reconciling is True while the object is on its way to its desired state, and absent
	// otherwise (kstatus' abnormal-true convention). It has negative polarity.
	Reconciling = "Reconciling"
	// Available says whether the object's workload serves.
	Available = "Available"
	// Progressing says whether the object is moving towards its desired state.
	Progressing = "Progressing"
	// Degraded says whether the object fails to reach or keep its desired state.
	// It has negative polarity: True is bad.
	Degraded = "Degraded"
	// Stalled says whether progress stopped on an error that needs a person, such as a
	// spec or a foreign object in the way (the kstatus convention), and is absent
	// otherwise. It has negative polarity: True is bad.
	Stalled = "Stalled"
)

// Getter is implemented by objects that expose their conditions. Generated API
// types implement it, and Setter, in two lines:
//
//	func (m *Memcached) GetConditions() []metav1.Condition     { return m.Status.Conditions }
//	func (m *Memcached) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }
type Getter interface {
	GetConditions() []metav1.Condition
}

// Setter is implemented by objects whose conditions can be replaced.
type Setter interface {
	Getter
	SetConditions([]metav1.Condition)
}

// generationGetter is implemented by every metav1.Object.
type generationGetter interface {
	GetGeneration() int64
}

// List adapts a bare slice of conditions to a Setter whose generation, the value
// that observedGeneration is set to, is generation. A nil conds reads as empty
// and ignores writes.
func List(conds *[]metav1.Condition, generation int64) Setter {
	return &list{conds: conds, generation: generation}
}

type list struct {
	conds      *[]metav1.Condition
	generation int64
}

func (l *list) GetConditions() []metav1.Condition {
	if l.conds == nil {
		return nil
	}
	return *l.conds
}

func (l *list) SetConditions(c []metav1.Condition) {
	if l.conds != nil {
		*l.conds = c
	}
}

func (l *list) GetGeneration() int64 { return l.generation }

// Set sets c on obj and reports whether anything changed, so that callers write
// status only when it did. Setting an identical condition changes nothing and
// allocates nothing. The rules:
//
//   - A condition of a new type is appended; an existing one keeps its position.
//   - LastTransitionTime moves when the condition is added or its Status changes,
//     to c.LastTransitionTime when it is set and to the current time otherwise,
//     truncated to whole seconds, the precision an API round trip keeps. A new
//     Reason, Message or ObservedGeneration alone keeps it. Inside the reconcile
//     shell the shell stamps every transition with its own clock, so logic never
//     passes a time.
//   - ObservedGeneration is set to obj's generation when obj has a
//     GetGeneration() int64 method, as every metav1.Object and every List has;
//     otherwise the ObservedGeneration of c is kept.
//   - A Reason the API server would reject (see ValidateReason) is a programming
//     error that must not fail the status write: Set stores InvalidReason instead
//     and prefixes the Message with the error, which names the bad reason. A
//     Status other than True, False or Unknown is stored as Unknown, likewise.
//   - The Message is trimmed to 32768 bytes, the API limit, without splitting a
//     UTF-8 character.
func Set(obj Setter, c metav1.Condition) (changed bool) {
	normalize(&c)
	if g, ok := obj.(generationGetter); ok {
		c.ObservedGeneration = g.GetGeneration()
	}

	conds := obj.GetConditions()
	i := index(conds, c.Type)
	if i < 0 {
		c.LastTransitionTime = transitionTime(c.LastTransitionTime)
		obj.SetConditions(append(conds, c))
		return true
	}

	old := &conds[i]
	if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message &&
		old.ObservedGeneration == c.ObservedGeneration {
		return false
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	} else {
		c.LastTransitionTime = transitionTime(c.LastTransitionTime)
	}
	*old = c
	obj.SetConditions(conds)
	return true
}

// transitionTime is t, or the current time when t is zero, in whole seconds.
func transitionTime(t metav1.Time) metav1.Time {
	if t.IsZero() {
		t.Time = clock.RealClock{}.Now()
	}
	return metav1.NewTime(t.Truncate(time.Second))
}

// MarkTrue sets condition typ to True with reason and a message formatted from
// format and args, and reports whether anything changed. See Set for the rules.
func MarkTrue(obj Setter, typ, reason, format string, args ...any) bool {
	return mark(obj, typ, metav1.ConditionTrue, reason, format, args)
}

// MarkFalse sets condition typ to False, like MarkTrue.
func MarkFalse(obj Setter, typ, reason, format string, args ...any) bool {
	return mark(obj, typ, metav1.ConditionFalse, reason, format, args)
}

// MarkUnknown sets condition typ to Unknown, like MarkTrue.
func MarkUnknown(obj Setter, typ, reason, format string, args ...any) bool {
	return mark(obj, typ, metav1.ConditionUnknown, reason, format, args)
}

func mark(obj Setter, typ string, status metav1.ConditionStatus, reason, format string, args []any) bool {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return Set(obj, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
}

// Find returns obj's condition of type typ, or nil when it has none. The
// result points into obj's conditions.
func Find(obj Getter, typ string) *metav1.Condition {
	conds := obj.GetConditions()
	if i := index(conds, typ); i >= 0 {
		return &conds[i]
	}
	return nil
}

func index(conds []metav1.Condition, typ string) int {
	for i := range conds {
		if conds[i].Type == typ {
			return i
		}
	}
	return -1
}

// IsTrue reports whether obj's condition typ is True.
func IsTrue(obj Getter, typ string) bool {
	c := Find(obj, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// IsFalse reports whether obj's condition typ is False.
func IsFalse(obj Getter, typ string) bool {
	c := Find(obj, typ)
	return c != nil && c.Status == metav1.ConditionFalse
}

// IsUnknown reports whether obj's condition typ is Unknown or absent: both mean
// that nobody knows yet.
func IsUnknown(obj Getter, typ string) bool {
	return !IsTrue(obj, typ) && !IsFalse(obj, typ)
}

// Remove removes obj's condition typ and reports whether it was there.
func Remove(obj Setter, typ string) bool {
	conds := obj.GetConditions()
	kept := slices.DeleteFunc(conds, func(c metav1.Condition) bool { return c.Type == typ })
	if len(kept) == len(conds) {
		return false
	}
	obj.SetConditions(kept)
	return true
}
