package requeue_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/requeue"
)

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2024-05-01T10:00:00Z", "2024-05-01T10:00:00.123456789Z", "2024-05-01T12:00:00+02:00", "tomorrow", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schedule string) {
		at, err := requeue.ParseTime(schedule)
		if err != nil {
			if !requeue.IsScheduleError(err) {
				t.Fatalf("error %v is not a schedule error", err)
			}
			return
		}
		if at.Location() != time.UTC {
			t.Fatalf("ParseTime(%q) is in %v, want UTC", schedule, at.Location())
		}
		again, err := requeue.ParseTime(at.Format(time.RFC3339Nano))
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
		c, err := requeue.ParseCron(spec)
		if err != nil {
			if !requeue.IsScheduleError(err) {
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
			var tm *requeue.TooManyMissedError
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

// FuzzOutcome merges outcomes built from the fuzzer's bytes and checks that
// the result never loses a delay to an error.
func FuzzOutcome(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5}, int64(time.Minute))
	f.Add([]byte{1, 1, 6}, int64(-1))
	f.Add([]byte{4, 2}, int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, kinds []byte, d int64) {
		now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
		errFail := errors.New("fail")
		outcomes := make([]requeue.Outcome, 0, len(kinds))
		for i, k := range kinds {
			delay := time.Duration(d) / time.Duration(i+1)
			outcomes = append(outcomes, []requeue.Outcome{
				requeue.Done(),
				requeue.After(delay),
				requeue.At(now.Add(delay)),
				requeue.RetryAfter(errFail, delay),
				requeue.Retry(errFail),
				requeue.Terminal(errFail),
				requeue.After(delay).WithJitter(0.5, func() float64 { return float64(k) / 256 }),
			}[int(k)%7])
		}
		o := requeue.Merge(outcomes...)
		res, err := o.Result(now)
		if res.RequeueAfter < 0 || res.RequeueAfter > 0 && err != nil {
			t.Fatalf("%v gave RequeueAfter %v with error %v", o, res.RequeueAfter, err)
		}
		if d, ok := o.Delay(now); ok != (res.RequeueAfter > 0) || d != res.RequeueAfter {
			t.Fatalf("Delay() = %v, %v but RequeueAfter = %v", d, ok, res.RequeueAfter)
		}
		if o.IsDone() != (res.RequeueAfter == 0 && err == nil) || o.String() == "" {
			t.Fatalf("%v: IsDone() = %v for %v, %v", o, o.IsDone(), res, err)
		}
	})
}

func FuzzJitter(f *testing.F) {
	f.Add(int64(time.Minute), 0.1, 0.5)
	f.Add(int64(math.MaxInt64), 2.0, 0.99)
	f.Add(int64(1), math.Inf(1), 0.5)
	f.Fuzz(func(t *testing.T, d int64, fraction, r float64) {
		got := requeue.Jitter(time.Duration(d), fraction, func() float64 { return r })
		if got < time.Duration(d) {
			t.Fatalf("Jitter(%v, %v, %v) = %v, shorter than the delay", d, fraction, r, got)
		}
		if fraction <= 1 && d > 0 && d < math.MaxInt64/4 && got-time.Duration(d) > time.Duration(d)+time.Microsecond {
			t.Fatalf("Jitter(%v, %v, %v) = %v, more than fraction of the delay", d, fraction, r, got)
		}
	})
}
