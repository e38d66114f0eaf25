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

func BenchmarkUntil(b *testing.B) {
	at := now.Add(time.Minute)
	for b.Loop() {
		requeue.Until(at, now, 2*time.Second)
	}
}

func BenchmarkParseTime(b *testing.B) {
	for b.Loop() {
		if _, err := requeue.ParseTime("2024-05-01T10:12:00Z"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseCron(b *testing.B) {
	for b.Loop() {
		if _, err := requeue.ParseCron("*/15 9-17 * * 1-5"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCronNext(b *testing.B) {
	c, err := requeue.ParseCron("*/15 * * * *")
	if err != nil {
		b.Fatal(err)
	}
	last := now.Add(-20 * time.Minute)
	for b.Loop() {
		if _, _, err := c.Next(last, time.Time{}, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCronNextManyMissed(b *testing.B) {
	c, err := requeue.ParseCron("* * * * *")
	if err != nil {
		b.Fatal(err)
	}
	last := now.Add(-99 * time.Minute)
	for b.Loop() {
		if _, _, err := c.Next(last, time.Time{}, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJitter(b *testing.B) {
	half := func() float64 { return 0.5 }
	for b.Loop() {
		requeue.Jitter(time.Minute, 0.1, half)
	}
}
