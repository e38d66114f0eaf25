// Package writerpolicy carries the policy of an ownership.Writer from the reconcile shell,
// which sets it, to package ownership, which follows it: the kinds the Writer writes, who
// hears of a kind refused, and the fight detector its writes consult. The policy is a value
// the Writer holds, so that a Writer whose Client the logic wraps (a log, metrics, a dry
// run) keeps it: nothing of it is found by probing the Client.
package writerpolicy

import (
	"fmt"

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

// binder is the function that binds a Writer to a Policy, a func(ownership.Writer, *Policy)
// ownership.Writer, which package ownership registers (Register): this package cannot
// name ownership.Writer, since ownership imports it.
var binder any

// Register makes bind the function Bind calls for a W. Package ownership calls it, for its
// Writer, when it is initialised, which is before anything that imports ownership runs.
func Register[W any](bind func(W, *Policy) W) { binder = bind }

// Bind returns w bound to p, typed as the Writer it is given: package reconcile calls it
// with an ownership.Writer and gets one back. It panics when ownership has registered no
// binder of W's type, a mistake of this module that no caller outside it can make.
func Bind[W any](w W, p *Policy) W {
	bind, ok := binder.(func(W, *Policy) W)
	if !ok {
		panic(fmt.Sprintf("writerpolicy: no binder of %T registered (package ownership registers its Writer's)", w))
	}
	return bind(w, p)
}
