package explore

import (
	"fmt"
	"time"
)

// settleFloor is the least time an operator is given to settle after a step: what an
// unloaded machine needs many times over.
const settleFloor = 30 * time.Second

// settleFactor is how many times as long as the reference runs took to settle after a
// step a perturbed run is given, beyond settleFloor: the runs made at once share the
// machine, and a shared CI runner can be several times slower in one run than in the next.
const settleFactor = 4

// A pace is how long an operator took to settle after a step, and how many writes it
// made meanwhile: the speed of the control plane and of the operator in that run, as the
// reference runs measure it.
type pace struct {
	took   time.Duration
	writes int
}

// slowerPaces is, for each step, the slower of two runs' paces and the more writes.
func slowerPaces(a, b map[int]pace) map[int]pace {
	out := make(map[int]pace, len(a))
	for step, p := range a {
		q := b[step]
		out[step] = pace{took: max(p.took, q.took), writes: max(p.writes, q.writes)}
	}
	return out
}

// settleLimit is how long a run's operator may take to settle after step: settleFactor
// times the reference runs' time, and never less than settleFloor. The reference runs
// themselves, which set the pace, have settleFloor.
func (ex *explorer) settleLimit(step int) time.Duration {
	return max(settleFloor, settleFactor*ex.paces[step].took)
}

// outOfTime says why a run whose operator was not quiet within limit after step is not
// judged (it counts as unjudged), or "" when that is the "never settled" violation. A
// run is out of time, not faulty, when its operator wrote no more than twice (and two
// writes more than) the reference runs did after the step: on a loaded machine it is
// still at the work a correct operator does, and judging it on time alone made false
// alarms. An operator that writes on and on, or a run with no reference to go by (the
// reference runs), is judged.
func outOfTime(step, writes int, ref pace, known bool, limit time.Duration) string {
	if !known || writes > 2*ref.writes+2 {
		return ""
	}
	return fmt.Sprintf("after step %d the operator made %d writes (the reference runs %d) and was not quiet within %s (%d times the reference runs' %s, at least %s): too slow a machine to judge the run, which no oracle judged",
		step+1, writes, ref.writes, limit.Round(time.Second), settleFactor, ref.took.Round(time.Millisecond), settleFloor)
}
