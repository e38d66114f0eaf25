// Package writerpolicy carries the policy of an ownership.Writer from the reconcile shell,
// which sets it, to package ownership, which follows it: the kinds the Writer writes, who
// hears of a kind refused, and the fight detector its writes consult. The policy is a value
// the Writer holds, so that a Writer whose Client the logic wraps (a log, metrics, a dry
// run) keeps it: nothing of it is found by probing the Client.
package writerpolicy

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/internal/fight"
)

// Policy is what a Writer bound to a controller's declaration follows.
type Policy struct {
	// Declared says that Owns is a declaration's (reconcile.WithChildren): the Writer
	// writes exactly those kinds, none when Owns is empty, whatever Writer.Owns says.
	// Without it, Writer.Owns applies as for a Writer filled in by hand.
	Declared bool
	Owns     []schema.GroupVersionKind

	// Refused, if set, hears of every child kind the Writer refuses, so that the shell
	// stalls the reconcile whatever the logic does with the error.
	Refused func(error)

	// Fights is the detector the Writer's updates consult; nil detects no fights.
	Fights *fight.Detector
}

// Bind returns the ownership.Writer w bound to p. Package ownership sets it when it is
// initialised, which is before anything that imports ownership runs: ownership cannot be
// named here, since it imports this package. Package reconcile calls it through a typed
// wrapper of its own.
var Bind func(w any, p *Policy) any
