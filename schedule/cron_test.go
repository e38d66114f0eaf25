package schedule_test

import (
	"errors"
	"testing"
	"time"
	_ "time/tzdata" // zones for CRON_TZ on machines without a zone database

	"github.com/reconcilekit/reconcilekit/schedule"
)

func TestParseCron(t *testing.T) {
	tests := []struct {
		spec  string
		valid bool
	}{
		{"*/5 * * * *", true},
		{"  0 9 * * 1-5  ", true},
		{"@hourly", true},
		{"@every 90s", true},
		{"0 0 29 2 *", true},
		{"CRON_TZ=Europe/Berlin 0 9 * * *", true},
		{"TZ=UTC 0 9 * * *", true},
		{"", false},
		{"* * * *", false},
		{"* * * * * *", false},
		{"61 * * * *", false},
		{"*/0 * * * *", false},
		{"@fortnightly", false},
		{"@every soon", false},
		{"0 0 30 2 *", false},
		{"TZ=UTC", false},
		{"CRON_TZ=Nowhere/Town 0 9 * * *", false},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := schedule.ParseCron(tt.spec)
			if (err == nil) != tt.valid {
				t.Fatalf("ParseCron() error = %v, want valid=%v", err, tt.valid)
			}
			var se *schedule.Error
			if err != nil && (!errors.As(err, &se) || se.Schedule != tt.spec) {
				t.Errorf("error %v is not a schedule error naming %q", err, tt.spec)
			}
		})
	}
}

func TestCronNext(t *testing.T) {
	at := func(hhmm string) time.Time {
		t, _ := time.Parse("2006-01-02 15:04", "2024-05-01 "+hhmm)
		return t
	}
	var never time.Time
	tests := []struct {
		name             string
		spec             string
		deadline         time.Duration
		maxMissed        int
		last, created    time.Time
		now              time.Time
		missed, next     time.Time
		tooManyMissedMax int
	}{{
		name: "finds no missed run right after the last one",
		spec: "*/15 * * * *", last: at("10:15"), now: at("10:20"),
		missed: never, next: at("10:30"),
	}, {
		name: "finds the run due now as missed",
		spec: "*/15 * * * *", last: at("10:00"), now: at("10:15"),
		missed: at("10:15"), next: at("10:30"),
	}, {
		name: "counts from creation when it never ran",
		spec: "*/15 * * * *", created: at("09:50"), now: at("10:20"),
		missed: at("10:15"), next: at("10:30"),
	}, {
		name: "returns the most recent of several missed runs",
		spec: "*/15 * * * *", last: at("09:00"), now: at("10:20"),
		missed: at("10:15"), next: at("10:30"),
	}, {
		name: "finds nothing missed when the last run is after now (clock skew)",
		spec: "*/15 * * * *", last: at("10:30"), now: at("10:20"),
		missed: never, next: at("10:30"),
	}, {
		name: "gives up after more than 100 missed runs",
		spec: "* * * * *", last: at("08:00"), now: at("10:00"),
		tooManyMissedMax: 100,
	}, {
		name: "gives up after more than MaxMissed missed runs",
		spec: "*/15 * * * *", maxMissed: 2, last: at("09:00"), now: at("10:00"),
		tooManyMissedMax: 2,
	}, {
		name: "ignores runs older than the starting deadline",
		spec: "* * * * *", deadline: 30 * time.Minute, last: at("08:00"), now: at("10:00"),
		missed: at("10:00"), next: at("10:01"),
	}, {
		name: "finds nothing missed when every missed run is past the deadline",
		spec: "0 * * * *", deadline: 10 * time.Minute, last: at("08:00"), now: at("10:30"),
		missed: never, next: at("11:00"),
	}, {
		name: "reads a schedule without a zone in UTC whatever the zone of now",
		spec: "0 12 * * *", last: at("10:00"), now: at("11:00").In(time.FixedZone("UTC+5", 5*3600)),
		missed: never, next: at("12:00"),
	}, {
		name: "reads a schedule in the zone it names",
		spec: "CRON_TZ=Europe/Berlin 0 13 * * *", last: at("10:00"), now: at("10:20"),
		missed: never, next: at("11:00"),
	}, {
		name: "runs a constant delay from the last run",
		spec: "@every 45m", last: at("09:00"), now: at("10:00"),
		missed: at("09:45"), next: at("10:45"),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := schedule.ParseCron(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			c.StartingDeadline, c.MaxMissed = tt.deadline, tt.maxMissed
			missed, next, err := c.Next(tt.last, tt.created, tt.now)
			if tt.tooManyMissedMax > 0 {
				var tm *schedule.TooManyMissedError
				if !errors.As(err, &tm) || tm.Max != tt.tooManyMissedMax {
					t.Fatalf("Next() error = %v, want too many missed runs (max %d)", err, tt.tooManyMissedMax)
				}
				return
			}
			if err != nil || !missed.Equal(tt.missed) || !next.Equal(tt.next) {
				t.Errorf("Next() = %v, %v, %v, want %v, %v", missed, next, err, tt.missed, tt.next)
			}
		})
	}
}

func TestTooManyMissedErrorSaysWhatToDo(t *testing.T) {
	want := "more than 100 missed start times: set or decrease the starting deadline, or check for clock skew"
	if got := (&schedule.TooManyMissedError{Max: 100}).Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestCronNextOnZeroCronFailsWithoutPanic(t *testing.T) {
	if _, _, err := (schedule.Cron{}).Next(time.Time{}, time.Time{}, now); err == nil {
		t.Error("Next() on a zero Cron returned no error")
	}
}
