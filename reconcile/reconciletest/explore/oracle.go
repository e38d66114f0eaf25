package explore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Oracle names one of the exploration's oracles: what a Violation was found by, and what
// a mutant's exploration names in CaughtBy. docs/exploring.md states each one's rule.
type Oracle string

// The oracles, each with the rule it judges a run by.
const (
	// EndState: a perturbed run ends in the state the reference run ended in, masked.
	EndState Oracle = "end state"
	// CreatedTwice: no object is created twice (two accepted creates of one name, two
	// generateName children alike under one owner, more creates than the reference).
	CreatedTwice Oracle = "created twice"
	// DeletedWrongly: no object is deleted more often than in the reference run.
	DeletedWrongly Oracle = "deleted wrongly"
	// NotControlled: the operator writes only objects it controls.
	NotControlled Oracle = "not controlled"
	// LeftBehind: once the workload has deleted every object of the operator's kinds,
	// none of them is still there and nothing the operator created is left unowned.
	LeftBehind Oracle = "left behind"
	// WritesOnceConverged: in the reference run, a fresh operator started after each
	// step writes nothing.
	WritesOnceConverged Oracle = "writes once converged"
	// CurrentTooEarly: a status kstatus reads as Current is written only once the
	// objects its owner controls have settled.
	CurrentTooEarly Oracle = "current too early"
	// NeverSettled: the operator settles after each step within the settle limit (30 s;
	// for a perturbed run, four times the reference runs' time after that step, if
	// longer) and 200 writes. A perturbed run out of time that wrote no more than twice
	// the reference runs is unjudged, not this violation: a slow machine, not a fault.
	NeverSettled Oracle = "never settled"
	// InvalidSpecNotStalled: a spec the schema refuses leaves the object Stalled, with a
	// reason, for the generation that holds it.
	InvalidSpecNotStalled Oracle = "invalid spec not stalled"
	// RetryStorm: an invalid spec is reconciled a bounded number of times.
	RetryStorm Oracle = "retry storm"
	// SpecNotActedOn: a valid new value of a spec field reaches one of the child fields
	// the reference run showed it reaches.
	SpecNotActedOn Oracle = "spec not acted on"
	// NotRecovered: once the spec before a transition is written back, the object and
	// its children are as they were before it.
	NotRecovered Oracle = "not recovered"
	// SpecNotReached is the differential oracle: once the operator has quiesced after a
	// valid spec transition, the children of the object (the fields a client manages, and
	// which children there are) are those a fresh operator makes from scratch for the
	// spec the transition left.
	SpecNotReached Oracle = "spec not reached"
)

// Oracles are every oracle, in the order docs/exploring.md lists them.
var Oracles = []Oracle{
	EndState, CreatedTwice, DeletedWrongly, NotControlled, LeftBehind,
	WritesOnceConverged, CurrentTooEarly, NeverSettled,
	InvalidSpecNotStalled, RetryStorm, SpecNotActedOn, NotRecovered, SpecNotReached,
}

// validate refuses an Exploration whose mutant could be neither caught nor missed: a
// Mutant with no CaughtBy, a CaughtBy without a Mutant, and a name in CaughtBy that is no
// oracle's (a misspelt name would turn every violation into a false alarm).
func (x Exploration) validate() error {
	var errs []error
	for _, o := range x.CaughtBy {
		if !slices.Contains(Oracles, o) {
			errs = append(errs, fmt.Errorf("explore: CaughtBy names %q, which is no oracle: use one of the constants of explore.Oracles (%s)", o, oracleList()))
		}
	}
	switch {
	case x.Mutant != "" && len(x.CaughtBy) == 0:
		errs = append(errs, fmt.Errorf("explore: the mutant %q names no oracle to catch it: set CaughtBy to the oracles its bug faults (explore.Oracles), or explore it without Mutant as a correct operator", x.Mutant))
	case x.Mutant == "" && len(x.CaughtBy) > 0:
		errs = append(errs, fmt.Errorf("explore: CaughtBy %v is set without a Mutant: name the mutant's bug in Mutant", x.CaughtBy))
	}
	return errors.Join(errs...)
}

func oracleList() string {
	s := make([]string, len(Oracles))
	for i, o := range Oracles {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}
