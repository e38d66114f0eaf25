package reconcile

import (
	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/writerpolicy"
	"github.com/reconcilekit/reconcilekit/ownership"
)

// This file is the shell's part "the fight detector" (docs/architecture.md, the shell's
// parts).

// fights is a shell's detector of fights over the children its logic writes
// (ownership.FightingError): one for each shell, so one for each manager, since the same
// declaration may run in several.
type fights struct {
	detector *fight.Detector
}

func newFights() fights { return fights{detector: new(fight.Detector)} }

// bind makes p consult the detector.
func (f fights) bind(p *writerpolicy.Policy) { p.Fights = f.detector }

// reported says whether err is a fight, which has a Warning event and a log line of its
// own when it is detected (ownership.Ensure): each reconcile held off by it is not news.
func (fights) reported(err error) bool { return ownership.IsFighting(err) }
