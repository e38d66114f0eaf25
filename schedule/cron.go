package schedule

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// defaultMaxMissed is the kubebuilder CronJob tutorial's cap on missed runs.
const defaultMaxMissed = 100

// firesCheckedFrom is the fixed instant from which ParseCron checks that a
// schedule fires at all: the start of a leap year, so that February 29 counts.
var firesCheckedFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Cron is a parsed cron schedule with the CronJob rules for runs it missed.
type Cron struct {
	schedule cron.Schedule

	// StartingDeadline, when positive, is how late a run may still start:
	// runs scheduled before now minus StartingDeadline are not counted as missed.
	StartingDeadline time.Duration
	// MaxMissed caps the missed runs Next counts before it gives up with a
	// *TooManyMissedError; zero or less means 100.
	MaxMissed int
}

// ParseCron parses a standard five-field cron expression ("*/5 * * * *"), or a
// descriptor such as "@hourly" or "@every 90s". The expression is read in UTC
// unless it starts with CRON_TZ=<zone> (or TZ=<zone>), so that it means the
// same instants on every machine. The error is an *Error, also for an
// expression that never fires, such as "0 0 30 2 *".
func ParseCron(spec string) (Cron, error) {
	invalid := func(err error) (Cron, error) {
		return Cron{}, &Error{Schedule: spec, Err: err}
	}
	zoned := strings.TrimSpace(spec)
	switch {
	case !strings.HasPrefix(zoned, "TZ=") && !strings.HasPrefix(zoned, "CRON_TZ="):
		zoned = "CRON_TZ=UTC " + zoned
	case !strings.Contains(zoned, " "):
		// The parser panics on a zone with nothing after it.
		return invalid(errors.New("no schedule after the time zone"))
	}
	s, err := cron.ParseStandard(zoned)
	if err != nil {
		return invalid(err)
	}
	if s.Next(firesCheckedFrom).IsZero() {
		return invalid(errors.New("never fires"))
	}
	return Cron{schedule: s}, nil
}

// TooManyMissedError reports that more runs were missed than a Cron allows,
// usually after a long outage or a clock skew.
type TooManyMissedError struct {
	Max int // the cap that was exceeded
}

// Error says what was missed and what to do about it.
func (e *TooManyMissedError) Error() string {
	return "more than " + strconv.Itoa(e.Max) + " missed start times: set or decrease the starting deadline, or check for clock skew"
}

// Next applies the kubebuilder CronJob tutorial's rules. Given the last run
// (zero if it never ran, in which case runs count from created), it returns
// the most recent run that was due by now but did not happen (zero if none)
// and the next run after now (zero if the schedule never fires again). Runs
// before now minus StartingDeadline are not counted. More than MaxMissed
// missed runs is a *TooManyMissedError.
func (c Cron) Next(last, created, now time.Time) (missed, next time.Time, err error) {
	if c.schedule == nil {
		return time.Time{}, time.Time{}, errors.New("schedule: Next on a Cron not made by ParseCron")
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
	count := 0
	for t := c.schedule.Next(earliest); !t.IsZero() && !t.After(now); t = c.schedule.Next(t) {
		if count++; count > maxMissed {
			return time.Time{}, time.Time{}, &TooManyMissedError{Max: maxMissed}
		}
		missed = t
	}
	return missed, c.schedule.Next(now), nil
}
