package requeue

import (
	"math"
	"time"
)

// Jitter returns d plus up to fraction of d, scaled by random, a source of
// numbers in [0, 1) such as rand.Float64. Injecting the source keeps tests
// deterministic. Values out of range are clamped; d itself is returned when
// d or fraction is not positive or random is nil, and the result saturates
// rather than overflows.
func Jitter(d time.Duration, fraction float64, random func() float64) time.Duration {
	if d <= 0 || !(fraction > 0) || random == nil {
		return d
	}
	r := random()
	if !(r > 0) { // also NaN
		return d
	}
	extra := float64(d) * fraction * min(r, 1)
	if extra >= float64(math.MaxInt64-d) {
		return math.MaxInt64
	}
	return d + time.Duration(extra)
}
