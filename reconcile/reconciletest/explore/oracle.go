package explore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
var Oracles = oracleNames()

// oracleNames names the oracles of the list, in its order: Oracles cannot leave one out.
func oracleNames() []Oracle {
	names := make([]Oracle, len(oracles))
	for i, o := range oracles {
		names[i] = o.name
	}
	return names
}

// oracles are the oracles a run is judged by, in the order docs/exploring.md lists them.
// Adding an oracle is adding it here, at the moment whose evidence it reads, with a
// constant of Oracle, a row in docs/exploring.md's table of oracles and a case in
// oracleCases (judge_internal_test.go); tests fail without the last two.
var oracles = []oracle{
	{EndState, atEnd, endState},
	{CreatedTwice, atEnd, createdTwice},
	{DeletedWrongly, atEnd, deletedWrongly},
	{NotControlled, atEnd, notControlled},
	{LeftBehind, atEnd, leftBehind},
	{WritesOnceConverged, atRestart, writesOnceConverged},
	{CurrentTooEarly, atSettled, currentTooEarly},
	{NeverSettled, atSettling, neverSettled},
	{InvalidSpecNotStalled, atTransition, invalidSpecNotStalled},
	{RetryStorm, atTransition, retryStorm},
	{SpecNotActedOn, atTransition, specNotActedOn},
	{NotRecovered, atReturn, notRecovered},
	{SpecNotReached, atScratch, specNotReached},
}

// An oracle holds runs to one rule, which it judges at one moment of a run from what the
// run shows then (its evidence) and from nothing else: so each is tested alone, on
// evidence made by hand, without an API server.
type oracle struct {
	name Oracle
	at   moment
	// judge finds the violations of the rule in e, and says what it could not judge.
	judge func(e *evidence) ([]Violation, []Unjudged)
}

// A moment is when in a run an oracle judges it, and so what evidence it is given.
type moment int

// The moments of a run, in the order a run comes to them.
const (
	// atSettling: each time the run waits for the operator to settle, as the wait ends
	// (evidence.settling).
	atSettling moment = iota
	// atSettled: once a step, a spec transition or the spec's return has settled
	// (evidence.claims).
	atSettled
	// atRestart: in the reference run, once a fresh operator started after a step has
	// settled (evidence.restarted).
	atRestart
	// atTransition: in a spec run, once the transition has settled (evidence.tr,
	// object, reconciled, family).
	atTransition
	// atReturn: in a spec run, once the spec before the transition is back and has
	// settled (evidence.tr, before, after).
	atReturn
	// atEnd: once the run has ended, compared with the reference run (evidence.got,
	// ref).
	atEnd
	// atScratch: once a spec run and its run from scratch have both ended
	// (evidence.got, tr, fresh).
	atScratch
)

// String is the moment as docs/exploring.md's table of oracles says it.
func (m moment) String() string {
	return [...]string{
		atSettling:   "as each wait for the operator to settle ends",
		atSettled:    "once a step, a transition or its return has settled",
		atRestart:    "once a fresh operator started after a step has settled (reference run)",
		atTransition: "once a spec transition has settled",
		atReturn:     "once the spec before a transition is back and settled",
		atEnd:        "at the run's end",
		atScratch:    "once the spec run and its run from scratch have ended",
	}[m]
}

// evidence is what a run shows its oracles at one moment: each moment fills what its
// oracles read (moment), and leaves the rest zero.
type evidence struct {
	// ex is what the exploration knows of the operator: its kinds, the masks, the
	// workload, where its spec's fields go. Oracles only read it.
	ex *explorer
	// got is the run; ref the reference run it is compared with, nil when got is the
	// reference run itself.
	got, ref *result
	// step is the index of the workload's step the moment came after.
	step int
	// settling is how the wait for the operator to settle ended.
	settling settling
	// claims are the Current verdicts written since the run last settled, each with
	// its object's children as they are once settled.
	claims []currentClaim
	// restarted are the writes of the fresh operator started once the step had settled,
	// and moved the objects others changed meanwhile (movedByOthers).
	restarted []write
	moved     []string
	// tr is the spec transition.
	tr *transition
	// object is tr's object once the transition settled, or objectErr why it could not
	// be read; reconciled the reconciles the operator made from the transition to
	// settling.
	object     *unstructured.Unstructured
	objectErr  error
	reconciled int
	// family is, for a valid transition, the object and its children once it settled
	// (every field, as the reference run's mapping was learnt from), or familyErr why
	// it could not be read.
	family    state
	familyErr error
	// before and after are the object and its children before the transition and once
	// the spec before it is back.
	before, after state
	// fresh is the run from scratch a spec run is compared with.
	fresh *result
}

// settling is how a wait for the operator to settle ended.
type settling struct {
	// gaveUp says the operator was not quiet within the settle limit, or wrote more
	// than 200 times; writes is how many times it wrote meanwhile.
	gaveUp bool
	writes int
	// outOfTime, for a wait given up on, says why the run is out of time rather than at
	// fault (outOfTime); "" if it is at fault.
	outOfTime string
}

// judgeAt applies the oracles of moment at to e: what they found, and what they could
// not judge. It only reads the explorer: runs made at once are judged at once.
func (ex *explorer) judgeAt(at moment, e *evidence) ([]Violation, []Unjudged) {
	e.ex = ex
	var vs []Violation
	var us []Unjudged
	for _, o := range oracles {
		if o.at != at {
			continue
		}
		v, u := o.judge(e)
		vs, us = append(vs, v...), append(us, u...)
	}
	return vs, us
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
