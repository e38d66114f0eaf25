package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Error reports a schedule that cannot be parsed. It is a problem with
// the object's spec, not a transient failure: report it (as a condition, say)
// and wait for the spec to change rather than retry.
type Error struct {
	Schedule string // as written in the spec
	Err      error  // what is wrong with it
}

// Error names the schedule and what is wrong with it.
func (e *Error) Error() string {
	return fmt.Sprintf("invalid schedule %q: %v", e.Schedule, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// IsInvalid reports whether err is, or wraps, an *Error: a schedule that cannot be parsed.
func IsInvalid(err error) bool {
	var se *Error
	return errors.As(err, &se)
}

// ParseTime parses a one-shot schedule: an RFC 3339 time in UTC, ending in
// "Z", such as "2024-05-01T10:00:00Z". Requiring UTC keeps the same spec
// meaning the same instant wherever it is read. The error is an *Error.
func ParseTime(schedule string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, schedule)
	switch {
	case err != nil:
		return time.Time{}, &Error{Schedule: schedule, Err: timeProblem(err)}
	case !strings.HasSuffix(schedule, "Z"):
		return time.Time{}, &Error{Schedule: schedule, Err: errors.New(`not in UTC: must end in "Z"`)}
	}
	return t, nil
}

// timeProblem says briefly what is wrong with a time that did not parse.
func timeProblem(err error) error {
	var pe *time.ParseError
	if errors.As(err, &pe) && pe.Message != "" {
		// The layout fits but a field does not, as in "month out of range".
		return errors.New(strings.TrimPrefix(pe.Message, ": "))
	}
	return errors.New(`not an RFC 3339 time such as "2024-05-01T10:00:00Z"`)
}

// Until returns how long from now until at (zero once it has passed), and
// whether at is due: no more than tolerance away. A tolerance lets a
// reconcile that wakes up slightly early act instead of sleeping again for
// an instant.
func Until(at, now time.Time, tolerance time.Duration) (wait time.Duration, due bool) {
	left := at.Sub(now)
	return max(left, 0), left <= tolerance
}
