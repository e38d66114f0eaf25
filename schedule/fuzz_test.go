package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/schedule"
)

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2024-05-01T10:00:00Z", "2024-05-01T10:00:00.123456789Z", "2024-05-01T12:00:00+02:00", "tomorrow", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		at, err := schedule.ParseTime(spec)
		if err != nil {
			if !schedule.IsInvalid(err) {
				t.Fatalf("error %v is not a schedule error", err)
			}
			return
		}
		if at.Location() != time.UTC {
			t.Fatalf("ParseTime(%q) is in %v, want UTC", spec, at.Location())
		}
		again, err := schedule.ParseTime(at.Format(time.RFC3339Nano))
		if err != nil || !again.Equal(at) {
			t.Fatalf("%v does not survive formatting: %v, %v", at, again, err)
		}
	})
}

// FuzzCronNext checks that any schedule either fails to parse with a schedule
// error or yields runs on the right side of now.
func FuzzCronNext(f *testing.F) {
	f.Add("*/15 * * * *", int64(-3600), int64(0), int64(0))
	f.Add("@every 90s", int64(-86400), int64(-86400*2), int64(600))
	f.Add("CRON_TZ=Europe/Berlin 0 9 * * 1-5", int64(0), int64(-86400*30), int64(0))
	f.Add("0 0 29 2 *", int64(60), int64(0), int64(-1))
	f.Add("TZ=UTC", int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, spec string, lastOffset, createdOffset, deadline int64) {
		c, err := schedule.ParseCron(spec)
		if err != nil {
			if !schedule.IsInvalid(err) {
				t.Fatalf("error %v is not a schedule error", err)
			}
			return
		}
		// Keep the times within a few decades: the schedule search is bounded
		// in years, not at the edges of time.Time.
		const span = int64(50 * 365 * 24 * time.Hour / time.Second)
		now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
		last := now.Add(time.Duration(lastOffset%span) * time.Second)
		created := now.Add(time.Duration(createdOffset%span) * time.Second)
		c.StartingDeadline = time.Duration(deadline%span) * time.Second

		missed, next, err := c.Next(last, created, now)
		if err != nil {
			var tm *schedule.TooManyMissedError
			if !errors.As(err, &tm) {
				t.Fatalf("Next() error %v is not a TooManyMissedError", err)
			}
			return
		}
		if !missed.IsZero() && (missed.After(now) || !missed.After(last)) {
			t.Fatalf("missed run %v is not in (last %v, now %v]", missed, last, now)
		}
		if !next.IsZero() && !next.After(now) {
			t.Fatalf("next run %v is not after now %v", next, now)
		}
	})
}
