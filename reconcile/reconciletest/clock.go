package reconciletest

import (
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// Clock is a clock that moves only when the test moves it. It implements the
// k8s.io/utils/clock interfaces that reconcilekit takes, so time-driven logic (requeue
// schedules, condition timestamps) is tested without sleeping.
type Clock = clocktesting.FakeClock

// NewClock returns a Clock that reads now until it is stepped or set.
func NewClock(now time.Time) *Clock {
	return clocktesting.NewFakeClock(now)
}
