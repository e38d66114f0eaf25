package schedule_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reconcilekit/reconcilekit/schedule"
)

func TestCronDueIsTheMostRecentRunNotYetMade(t *testing.T) {
	hour := func(h, m int) time.Time { return time.Date(2016, 5, 19, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name          string
		spec          string
		deadline      time.Duration
		last, created time.Time
		now           time.Time
		want          schedule.Due
	}{{
		name: "nothing due before the first run",
		spec: "0 * * * *", created: hour(9, 59), now: hour(9, 59),
		want: schedule.Due{Next: hour(10, 0)},
	}, {
		name: "the first run is due from the creation on",
		spec: "0 * * * *", created: hour(9, 59), now: hour(10, 1),
		want: schedule.Due{Run: hour(10, 0), Missed: 1, Next: hour(11, 0)},
	}, {
		name: "runs count from the last one, and only the latest is due",
		spec: "0 * * * *", last: hour(7, 0), created: hour(1, 0), now: hour(10, 1),
		want: schedule.Due{Run: hour(10, 0), Missed: 3, Next: hour(11, 0)},
	}, {
		name: "the last run made is not due again",
		spec: "0 * * * *", last: hour(10, 0), created: hour(1, 0), now: hour(10, 30),
		want: schedule.Due{Next: hour(11, 0)},
	}, {
		name: "a run past its starting deadline is not due",
		spec: "0 * * * *", deadline: 10 * time.Second, last: hour(9, 0), now: hour(10, 1),
		want: schedule.Due{Next: hour(11, 0)},
	}, {
		name: "a run within its starting deadline is",
		spec: "0 * * * *", deadline: 2 * time.Hour, last: hour(5, 0), now: hour(10, 1),
		want: schedule.Due{Run: hour(10, 0), Missed: 2, Next: hour(11, 0)},
	}, {
		name: "more than 100 missed runs: the latest is still found, and the count says too many",
		spec: "0 * * * *", last: hour(10, 0).AddDate(0, 0, -7), now: hour(10, 1),
		want: schedule.Due{Run: hour(10, 0), Missed: 101, TooManyMissed: true, Next: hour(11, 0)},
	}, {
		name: "decades missed of a schedule that fires rarely: the latest run, found at once",
		spec: "30 6 * * 1", created: time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), now: hour(10, 1), // a Thursday
		want: schedule.Due{Run: time.Date(2016, 5, 16, 6, 30, 0, 0, time.UTC), Missed: 101, TooManyMissed: true,
			Next: time.Date(2016, 5, 23, 6, 30, 0, 0, time.UTC)},
	}, {
		name: "the time zone of the schedule",
		spec: "CRON_TZ=America/New_York 0 6 * * *", created: hour(9, 0), now: hour(10, 1),
		want: schedule.Due{Run: hour(10, 0), Missed: 1, Next: hour(10, 0).AddDate(0, 0, 1)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := schedule.ParseCron(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			c.StartingDeadline = tc.deadline
			got, err := c.Due(tc.last, tc.created, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Due (-want +got):\n%s", d)
			}
		})
	}
}

func TestCronDueOfACronNotParsedIsAnError(t *testing.T) {
	if _, err := (schedule.Cron{}).Due(time.Time{}, time.Time{}, time.Now()); err == nil {
		t.Error("Due on a zero Cron: no error")
	}
}

func TestCronDueOfAnEveryScheduleKeepsInStepWithTheLastRun(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2016, 5, 19, h, m, s, 0, time.UTC) }
	for _, tc := range []struct {
		name          string
		deadline      time.Duration
		last, created time.Time
		now           time.Time
		want          schedule.Due
	}{{
		name: "not yet due",
		last: at(9, 1, 0), now: at(10, 0, 0),
		want: schedule.Due{Next: at(10, 1, 0)},
	}, {
		name:    "due, and the next an hour after it",
		created: at(8, 59, 0), now: at(9, 59, 30),
		want: schedule.Due{Run: at(9, 59, 0), Missed: 1, Next: at(10, 59, 0)},
	}, {
		name:     "past its starting deadline: not due, and the next still in step",
		deadline: 10 * time.Second, created: at(8, 59, 0), now: at(9, 59, 11),
		want: schedule.Due{Next: at(10, 59, 0)},
	}, {
		name: "a week missed",
		last: at(9, 1, 0), now: at(9, 1, 0).AddDate(0, 0, 7).Add(30 * time.Second),
		want: schedule.Due{Run: at(9, 1, 0).AddDate(0, 0, 7), Missed: 101, TooManyMissed: true, Next: at(10, 1, 0).AddDate(0, 0, 7)},
	}, {
		name: "time went back before the last run",
		last: at(10, 1, 0), now: at(9, 59, 0),
		want: schedule.Due{Next: at(11, 1, 0)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := schedule.ParseCron("@every 1h")
			if err != nil {
				t.Fatal(err)
			}
			c.StartingDeadline = tc.deadline
			got, err := c.Due(tc.last, tc.created, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Due (-want +got):\n%s", d)
			}
		})
	}
}
