package requeue_test

import (
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/requeue"
)

func BenchmarkMergeResult(b *testing.B) {
	at := now.Add(time.Hour)
	for b.Loop() {
		o := requeue.Merge(requeue.Done(), requeue.After(time.Minute), requeue.At(at), requeue.After(time.Second))
		if res, err := o.Result(now); res.RequeueAfter != time.Second || err != nil {
			b.Fatal(res, err)
		}
	}
}

func BenchmarkJitter(b *testing.B) {
	half := func() float64 { return 0.5 }
	for b.Loop() {
		requeue.Jitter(time.Minute, 0.1, half)
	}
}
