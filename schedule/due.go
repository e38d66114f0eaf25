package schedule

import (
	"errors"
	"time"

	"github.com/robfig/cron/v3"
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
// most recent is found without stepping through decades of them. The runs of an "@every"
// schedule are in step with last (or created): every whole delay after it.
//
// Next, by contrast, stops with a *TooManyMissedError, the kubebuilder tutorial's rule.
func (c Cron) Due(last, created, now time.Time) (Due, error) {
	if c.schedule == nil {
		return Due{}, errors.New("schedule: Due on a Cron not made by ParseCron")
	}
	anchor := last
	if anchor.IsZero() {
		anchor = created
	}
	earliest := anchor
	if c.StartingDeadline > 0 {
		if deadline := now.Add(-c.StartingDeadline); deadline.After(earliest) {
			earliest = deadline
		}
	}
	maxMissed := c.MaxMissed
	if maxMissed <= 0 {
		maxMissed = defaultMaxMissed
	}
	if every, ok := c.schedule.(cron.ConstantDelaySchedule); ok {
		return c.every(every.Delay, anchor, earliest, now, maxMissed), nil
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

// every is Due for an "@every <delay>" schedule, whose runs are the anchor (the last run,
// or the creation) plus whole delays: a starting deadline drops runs, it does not move
// them, and the next run stays in step with the last one.
func (c Cron) every(delay time.Duration, anchor, earliest, now time.Time, maxMissed int) Due {
	if now.Before(anchor) {
		return Due{Next: anchor.Add(delay)}
	}
	k := int64(now.Sub(anchor) / delay) // runs since the anchor, by now
	d := Due{Next: anchor.Add(time.Duration(k+1) * delay)}
	skipped := int64(0) // runs at or before earliest
	if earliest.After(anchor) {
		skipped = int64(earliest.Sub(anchor) / delay)
	}
	if missed := k - skipped; missed > 0 {
		d.Run = anchor.Add(time.Duration(k) * delay)
		d.Missed = int(min(missed, int64(maxMissed)+1))
		d.TooManyMissed = missed > int64(maxMissed)
	}
	return d
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
