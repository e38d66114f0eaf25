package phase

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Reasons the Machine gives its condition, besides the phase names themselves.
const (
	// ReasonUnknown is Stalled's reason for an object in a phase the Machine does not declare.
	ReasonUnknown = "UnknownPhase"
	// ReasonInvalidTransition is Stalled's reason for a handler that moved to a phase its
	// State does not list in Next.
	ReasonInvalidTransition = "InvalidTransition"
)

// Object is an object whose status has a phase and conditions. API types implement it
// with four one-line methods.
type Object interface {
	client.Object
	conditions.Setter
	GetPhase() string
	SetPhase(string)
}

// State is one phase of a Machine: what runs in it and where it may lead.
type State[T Object] struct {
	// Handle runs for an object in this phase. It returns the phase to move to (its own, or
	// "", to stay) and when to run again. A phase without Handle is terminal: nothing more
	// happens to an object that reaches it.
	Handle func(ctx context.Context, obj T, s reconcile.Scope) (next string, outcome requeue.Outcome)
	// Next lists the phases Handle may move to; any other is refused.
	Next []string
}

// Machine is a reconcile.Logic that drives an object through declared phases, and tells the shell how
// far it is: in a phase with a handler the object is Reconciling, with the phase as reason;
// in a terminal phase (no handler) it is Ready, unless a condition the handlers set says it
// failed (a condition of positive polarity False, or of negative polarity True), in which
// case it is Stalled with that condition's reason: the end was reached, and it is a failure.
// kubectl wait and kstatus understand the object without knowing its phases.
//
// An object with an empty phase starts in the initial phase. After a transition the next
// phase's handler runs at once, in the same reconcile, so one status write records the whole
// step. An unknown phase or an undeclared transition is reported as Stalled and is not
// retried: retrying cannot fix it, a new spec or a fixed operator can.
type Machine[T Object] struct {
	initial string
	phases  map[string]State[T]
	// reasons holds each phase's condition reason, made once so that a step allocates
	// nothing.
	reasons map[string]string
}

// New returns a Machine with the given initial phase and phases, each named by its key. It
// refuses a definition that names a phase it does not declare.
func New[T Object](initial string, phases map[string]State[T]) (*Machine[T], error) {
	if _, ok := phases[initial]; !ok {
		return nil, fmt.Errorf("initial phase %q is not declared", initial)
	}
	for name, p := range phases {
		for _, next := range p.Next {
			if _, ok := phases[next]; !ok {
				return nil, fmt.Errorf("phase %q may move to %q, which is not declared", name, next)
			}
		}
		if p.Handle == nil && len(p.Next) > 0 {
			return nil, fmt.Errorf("terminal phase %q (no handler) cannot move to other phases", name)
		}
	}
	reasons := make(map[string]string, len(phases))
	for name := range phases {
		reasons[name] = reason(name)
	}
	return &Machine[T]{initial: initial, phases: phases, reasons: reasons}, nil
}

// Reconcile implements reconcile.Logic.
func (m *Machine[T]) Reconcile(ctx context.Context, obj T, s reconcile.Scope) requeue.Outcome {
	if obj.GetPhase() == "" {
		obj.SetPhase(m.initial)
	}
	outcome := requeue.Done()
	// A reconcile takes at most one step per declared phase, so a cycle of phases cannot
	// spin here; it goes on in the next reconcile.
	for range len(m.phases) {
		phase := obj.GetPhase()
		p, ok := m.phases[phase]
		if !ok {
			conditions.MarkTrue(obj, conditions.Stalled, ReasonUnknown, "phase %q is not one of %s", phase, m.names())
			return requeue.Done()
		}
		if p.Handle == nil {
			break
		}
		next, o := p.Handle(ctx, obj, s)
		outcome = requeue.Merge(outcome, o)
		if next == "" || next == phase {
			break
		}
		if !slices.Contains(p.Next, next) {
			err := fmt.Errorf("phase %s cannot move to %s (allowed: %s)", phase, next, strings.Join(p.Next, ", "))
			conditions.MarkTrue(obj, conditions.Stalled, ReasonInvalidTransition, "%v", err)
			return requeue.Terminal(err)
		}
		obj.SetPhase(next)
		if o.Err() != nil {
			break
		}
	}
	m.report(obj)
	return outcome
}

// report tells the shell how far obj, in a declared phase, has come.
func (m *Machine[T]) report(obj T) {
	phase := obj.GetPhase()
	if m.phases[phase].Handle != nil {
		conditions.Set(obj, metav1.Condition{Type: conditions.Reconciling, Status: metav1.ConditionTrue, Reason: m.reasons[phase], Message: "phase " + phase})
		return
	}
	for _, c := range obj.GetConditions() {
		bad := metav1.ConditionFalse
		if conditions.NegativePolarity(c.Type) {
			bad = metav1.ConditionTrue
		}
		if c.Type != conditions.Reconciling && c.Type != conditions.Progressing && c.Status == bad {
			conditions.Set(obj, metav1.Condition{Type: conditions.Stalled, Status: metav1.ConditionTrue, Reason: c.Reason, Message: c.Message})
			return
		}
	}
}

func (m *Machine[T]) names() string {
	names := make([]string, 0, len(m.phases))
	for name := range m.phases {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// reason turns a phase name such as IN_PROGRESS into a condition reason such as InProgress.
func reason(phase string) string {
	var b strings.Builder
	for word := range strings.FieldsFuncSeq(phase, func(r rune) bool { return r == '_' || r == '-' || r == ' ' }) {
		b.WriteString(strings.ToUpper(word[:1]))
		b.WriteString(strings.ToLower(word[1:]))
	}
	return b.String()
}
