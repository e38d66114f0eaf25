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

func ExampleJitter() {
	// Spread a one-minute poll by up to 10% so that many objects do not poll at once.
	d := requeue.Jitter(time.Minute, 0.1, rand.Float64)
	fmt.Println(d >= time.Minute && d < 66*time.Second)
	// Output:
	// true
}
