package schedule_test

import (
	"fmt"
	"time"

	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/schedule"
)

func ExampleUntil() {
	now := time.Date(2024, 5, 1, 10, 11, 58, 500_000_000, time.UTC)
	at, err := schedule.ParseTime("2024-05-01T10:12:00Z")
	if err != nil {
		fmt.Println(err) // an *Error: report it, do not retry
		return
	}
	if wait, due := schedule.Until(at, now, 2*time.Second); due {
		fmt.Println("run the command now")
	} else {
		fmt.Println(requeue.After(wait))
	}
	// Output:
	// run the command now
}

func ExampleParseTime() {
	_, err := schedule.ParseTime("2024-05-01T12:12:00+02:00")
	fmt.Println(schedule.IsInvalid(err), err)
	// Output:
	// true invalid schedule "2024-05-01T12:12:00+02:00": not in UTC: must end in "Z"
}

func ExampleCron_Next() {
	c, err := schedule.ParseCron("*/15 * * * *")
	if err != nil {
		fmt.Println(err)
		return
	}
	c.StartingDeadline = time.Hour

	last := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	now := time.Date(2024, 5, 1, 10, 20, 0, 0, time.UTC)
	missed, next, err := c.Next(last, time.Time{}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("run now for", missed.Format(time.Kitchen))
	fmt.Println(requeue.At(next))
	// Output:
	// run now for 10:15AM
	// at 2024-05-01T10:30:00Z
}

// The run due at now, by Kubernetes' CronJob rules: the latest missed since the last run,
// within the starting deadline, and the next.
func ExampleCron_Due() {
	c, err := schedule.ParseCron("0 * * * *")
	if err != nil {
		panic(err) // a schedule the operator's user wrote: report it as a condition
	}
	c.StartingDeadline = 2 * time.Hour
	last := time.Date(2030, 1, 1, 6, 0, 0, 0, time.UTC)
	now := time.Date(2030, 1, 1, 10, 1, 0, 0, time.UTC)
	due, _ := c.Due(last, time.Time{}, now)
	fmt.Println(due.Run.Format(time.Kitchen), due.Missed, due.Next.Format(time.Kitchen))
	// Output: 10:00AM 2 11:00AM
}
