package requeue_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/requeue"
)

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
