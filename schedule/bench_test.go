package schedule_test

import (
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/schedule"
)

func BenchmarkUntil(b *testing.B) {
	at := now.Add(time.Minute)
	for b.Loop() {
		schedule.Until(at, now, 2*time.Second)
	}
}

func BenchmarkParseTime(b *testing.B) {
	for b.Loop() {
		if _, err := schedule.ParseTime("2024-05-01T10:12:00Z"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseCron(b *testing.B) {
	for b.Loop() {
		if _, err := schedule.ParseCron("*/15 9-17 * * 1-5"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCronNext(b *testing.B) {
	c, err := schedule.ParseCron("*/15 * * * *")
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
	c, err := schedule.ParseCron("* * * * *")
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
