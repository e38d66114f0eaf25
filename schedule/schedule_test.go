package schedule_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/schedule"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		schedule string
		want     time.Time
		valid    bool
	}{
		{"2024-05-01T10:00:00Z", now, true},
		{"2024-05-01T10:00:00.5Z", now.Add(500 * time.Millisecond), true},
		{"", time.Time{}, false},
		{"tomorrow", time.Time{}, false},
		{"2024-05-01 10:00:00Z", time.Time{}, false},
		{"2024-13-01T10:00:00Z", time.Time{}, false},
		{"2024-05-01T10:00:00", time.Time{}, false},
		{"2024-05-01T12:00:00+02:00", time.Time{}, false},
		{"2024-05-01T10:00:00+00:00", time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.schedule, func(t *testing.T) {
			got, err := schedule.ParseTime(tt.schedule)
			if !got.Equal(tt.want) || (err == nil) != tt.valid {
				t.Fatalf("ParseTime() = %v, %v, want %v, valid=%v", got, err, tt.want, tt.valid)
			}
			if err != nil && !schedule.IsInvalid(err) {
				t.Errorf("error %v is not a schedule error", err)
			}
			if err == nil && got.Location() != time.UTC {
				t.Errorf("location = %v, want UTC", got.Location())
			}
		})
	}
}

func TestInvalidScheduleError(t *testing.T) {
	_, err := schedule.ParseTime("soon")
	wrapped := fmt.Errorf("reading spec: %w", err)

	var se *schedule.Error
	if !errors.As(wrapped, &se) || se.Schedule != "soon" || errors.Unwrap(se) != se.Err {
		t.Fatalf("errors.As(%v) = %+v, want the schedule and its cause", wrapped, se)
	}
	if want := `invalid schedule "soon": not an RFC 3339 time such as "2024-05-01T10:00:00Z"`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	if _, err := schedule.ParseTime("2024-13-01T10:00:00Z"); err == nil || err.Error() != `invalid schedule "2024-13-01T10:00:00Z": month out of range` {
		t.Errorf("ParseTime() error = %v, want it to say the month is out of range", err)
	}
	if !schedule.IsInvalid(wrapped) || schedule.IsInvalid(errBoom) || schedule.IsInvalid(nil) {
		t.Error("IsInvalid does not recognise exactly the schedule errors")
	}
}

func TestUntil(t *testing.T) {
	const tolerance = 2 * time.Second
	tests := []struct {
		name string
		at   time.Time
		wait time.Duration
		due  bool
	}{
		{"waits for a time beyond the tolerance", now.Add(time.Minute), time.Minute, false},
		{"waits for a time just beyond the tolerance", now.Add(tolerance + time.Nanosecond), tolerance + time.Nanosecond, false},
		{"is due at the edge of the tolerance", now.Add(tolerance), tolerance, true},
		{"is due within the tolerance", now.Add(time.Second), time.Second, true},
		{"is due at the time", now, 0, true},
		{"is due after the time, with nothing to wait", now.Add(-time.Hour), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, due := schedule.Until(tt.at, now, tolerance)
			if wait != tt.wait || due != tt.due {
				t.Errorf("Until() = %v, %v, want %v, %v", wait, due, tt.wait, tt.due)
			}
		})
	}
}

// now is the tests' fixed instant.
var (
	now     = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	errBoom = errors.New("boom")
)
