package requeue

import (
	"errors"
	"time"
)

// Due is what a Cron says about its runs at one instant: see Cron.Due.
type Due struct {
	// Run is the most recent run due by now and not yet made (zero when none is due):
	// the one a periodic operator starts now. Older missed runs are never made up.
	Run time.Time
	// Missed counts the runs due since the last one, Run included, up to MaxMissed+1.
	Missed int
	// TooManyMissed is true when more than MaxMissed runs were due: a long outage, or a
	// clock skew. Run is still the most recent, as Kubernetes' CronJob controller starts
	// it; an operator may say so (a warning) or refuse, as the kubebuilder tutorial does.
	TooManyMissed bool
	// Next is the first run after now, zero when the schedule never fires again.
	Next time.Time
}

// Due says which run is due at now, by the rules of Kubernetes' CronJob controller. Runs
// count from last (the last run made, zero if none) or, when zero, from created; a
// positive StartingDeadline drops the runs scheduled before now less StartingDeadline,
// which may no longer start. The result never depends on how many runs were missed: the
// most recent is found without stepping through decades of them.
//
// Next, by contrast, stops with a *TooManyMissedError, the kubebuilder tutorial's rule.
func (c Cron) Due(last, created, now time.Time) (Due, error) {
	if c.schedule == nil {
		return Due{}, errors.New("requeue: Due on a Cron not made by ParseCron")
	}
	earliest := last
	if earliest.IsZero() {
		earliest = created
	}
	if c.StartingDeadline > 0 {
		if deadline := now.Add(-c.StartingDeadline); deadline.After(earliest) {
			earliest = deadline
		}
	}
	maxMissed := c.MaxMissed
	if maxMissed <= 0 {
		maxMissed = defaultMaxMissed
	}
	d := Due{Next: c.schedule.Next(now)}
	for t := c.schedule.Next(earliest); !t.IsZero() && !t.After(now); t = c.schedule.Next(t) {
		d.Missed++
		d.Run = t
		if d.Missed > maxMissed {
			d.TooManyMissed = true
			d.Run = c.latest(earliest, now)
			break
		}
	}
	return d, nil
}

// latest is the most recent run in (earliest, now], found in windows before now that
// double until one holds a run or reaches earliest: the schedule may not fire for a while
// (nights, weekends), and stepping from earliest could take millions of steps.
func (c Cron) latest(earliest, now time.Time) time.Time {
	span := now.Sub(earliest)
	for window := time.Minute; ; window *= 2 {
		from := earliest
		if window < span {
			from = now.Add(-window)
		}
		var run time.Time
		for t := c.schedule.Next(from); !t.IsZero() && !t.After(now); t = c.schedule.Next(t) {
			run = t
		}
		if !run.IsZero() || from.Equal(earliest) {
			return run
		}
	}
}
