package reconcile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/internal/writerpolicy"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// This file is the shell's part "the refusal of undeclared kinds" (docs/architecture.md,
// the shell's parts).

// declared is the kinds a controller's declaration owns (WithChildren): the only kinds the
// Writer of the Scope writes, none when there are none, so that a child the manager does
// not watch is never written silently. A refusal is a wiring mistake that no retry mends:
// the reconcile ends terminal, whatever the logic did with the error.
type declared struct {
	owns []schema.GroupVersionKind
}

// declare returns the kinds of children, as scheme names them, and an error for each it
// cannot name.
func declare(children []client.Object, scheme *runtime.Scheme) (declared, []error) {
	d := declared{owns: []schema.GroupVersionKind{}}
	if scheme == nil {
		return d, nil
	}
	var errs []error
	for _, child := range children {
		gvk, err := apiutil.GVKForObject(child, scheme)
		if err != nil {
			errs = append(errs, fmt.Errorf("child kind %T: %w", child, err))
			continue
		}
		d.owns = append(d.owns, gvk)
	}
	return d, errs
}

// bind makes p follow the declaration: exactly its kinds, each refusal noted in refused
// (the first one), where the shell reads it once the logic has returned.
func (d declared) bind(p *writerpolicy.Policy, refused *error) {
	p.Declared, p.Owns = true, d.owns
	p.Refused = func(err error) {
		if *refused == nil {
			*refused = err
		}
	}
}

// verdict is the outcome of a reconcile in which the Writer refused a kind (refused, not
// nil): terminal, since a new declaration mends it and no retry does; outcome otherwise.
func (declared) verdict(outcome requeue.Outcome, refused error) requeue.Outcome {
	if refused == nil {
		return outcome
	}
	return requeue.Terminal(refused)
}
