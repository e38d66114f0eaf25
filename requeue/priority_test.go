package requeue_test

import (
	"strconv"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/requeue"
)

func TestPriorityReachesControllerRuntimeOnlyWhenAskedFor(t *testing.T) {
	tests := []struct {
		name    string
		outcome requeue.Outcome
		want    *int
	}{
		{name: "no priority keeps the request's own", outcome: requeue.After(time.Second)},
		{name: "a delay carries its priority", outcome: requeue.After(time.Second).WithPriority(10), want: ptr.To(10)},
		{name: "a retry carries its priority", outcome: requeue.Retry(errBoom).WithPriority(-1), want: ptr.To(-1)},
		{name: "a terminal error carries its priority", outcome: requeue.Terminal(errBad).WithPriority(3), want: ptr.To(3)},
		{name: "done carries its priority", outcome: requeue.Done().WithPriority(5), want: ptr.To(5)},
		{name: "Merge keeps the highest priority, even of an outcome that lost",
			outcome: requeue.Merge(requeue.After(time.Minute).WithPriority(1), requeue.Retry(errBoom), requeue.Done().WithPriority(7)), want: ptr.To(7)},
		{name: "Merge without priorities has none", outcome: requeue.Merge(requeue.After(time.Minute), requeue.Done())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := tt.outcome.Result(now)
			if (res.Priority == nil) != (tt.want == nil) || (res.Priority != nil && *res.Priority != *tt.want) {
				t.Errorf("Priority = %v, want %v", ptrString(res.Priority), ptrString(tt.want))
			}
			p, ok := tt.outcome.Priority()
			if ok != (tt.want != nil) || (ok && p != *tt.want) {
				t.Errorf("Priority() = %d, %v, want %v", p, ok, ptrString(tt.want))
			}
		})
	}
}

func TestWithPriorityKeepsTheRestOfTheOutcome(t *testing.T) {
	o := requeue.RetryAfter(errBoom, time.Minute).WithPriority(2)
	res, err := o.Result(now)
	if res.RequeueAfter != time.Minute || err != nil || o.Err() != errBoom {
		t.Errorf("Result = %+v, %v; Err = %v, want a minute's delay, no error returned, errBoom kept", res, err, o.Err())
	}
}

func ptrString(p *int) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(*p)
}
