package requeue_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/reconcilekit/reconcilekit/requeue"
)

func ExampleOutcome_Result() {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	notReady := errors.New("deployment has 1 of 3 ready replicas")

	for _, o := range []requeue.Outcome{
		requeue.Done(),
		requeue.After(30 * time.Second),
		requeue.At(now.Add(time.Hour)),
		requeue.RetryAfter(notReady, 10*time.Second), // the delay survives
		requeue.Retry(errors.New("connection refused")),
		requeue.Terminal(errors.New("spec.image is empty")),
	} {
		res, err := o.Result(now)
		fmt.Printf("%-58s -> RequeueAfter=%v err=%v\n", o, res.RequeueAfter, err)
	}
	// Output:
	// done                                                       -> RequeueAfter=0s err=<nil>
	// after 30s                                                  -> RequeueAfter=30s err=<nil>
	// at 2024-05-01T11:00:00Z                                    -> RequeueAfter=1h0m0s err=<nil>
	// retry after 10s: deployment has 1 of 3 ready replicas      -> RequeueAfter=10s err=<nil>
	// retry: connection refused                                  -> RequeueAfter=0s err=connection refused
	// terminal: spec.image is empty                              -> RequeueAfter=0s err=terminal error: spec.image is empty
}

func ExampleMerge() {
	// Each step of a reconcile says when it wants to run again; the most urgent wins.
	fmt.Println(requeue.Merge(requeue.Done(), requeue.After(time.Minute), requeue.After(10*time.Second)))
	fmt.Println(requeue.Merge(requeue.After(time.Second), requeue.Terminal(errors.New("bad spec"))))
	// Output:
	// after 10s
	// terminal: bad spec
}

func ExampleUntil() {
	now := time.Date(2024, 5, 1, 10, 11, 58, 500_000_000, time.UTC)
	at, err := requeue.ParseTime("2024-05-01T10:12:00Z")
	if err != nil {
		fmt.Println(err) // a *ScheduleError: report it, do not retry
		return
	}
	if wait, due := requeue.Until(at, now, 2*time.Second); due {
		fmt.Println("run the command now")
	} else {
		fmt.Println(requeue.After(wait))
	}
	// Output:
	// run the command now
}

func ExampleParseTime() {
	_, err := requeue.ParseTime("2024-05-01T12:12:00+02:00")
	fmt.Println(requeue.IsScheduleError(err), err)
	// Output:
	// true invalid schedule "2024-05-01T12:12:00+02:00": not in UTC: must end in "Z"
}

func ExampleCron_Next() {
	c, err := requeue.ParseCron("*/15 * * * *")
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

func ExampleJitter() {
	// Spread a one-minute poll by up to 10% so that many objects do not poll at once.
	d := requeue.Jitter(time.Minute, 0.1, rand.Float64)
	fmt.Println(d >= time.Minute && d < 66*time.Second)
	// Output:
	// true
}

// The run due at now, by Kubernetes' CronJob rules: the latest missed since the last run,
// within the starting deadline, and the next.
func ExampleCron_Due() {
	c, err := requeue.ParseCron("0 * * * *")
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
