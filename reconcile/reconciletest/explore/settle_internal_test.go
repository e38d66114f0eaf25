package explore

import (
	"strings"
	"testing"
	"time"
)

func TestARunOutOfTimeIsUnjudgedUnlessItsOperatorWritesOnOrHasNoReference(t *testing.T) {
	ref := pace{took: 2 * time.Second, writes: 7}
	for _, tc := range []struct {
		name     string
		writes   int
		known    bool
		unjudged bool
	}{
		{"the writes of the reference runs, on a slow machine", 7, true, true},
		{"fewer writes than the reference runs", 3, true, true},
		{"twice the reference runs' writes and two", 16, true, true},
		{"more than that: an operator that writes on", 17, true, false},
		{"no reference to go by: a reference run", 7, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := outOfTime(1, tc.writes, ref, tc.known, 30*time.Second)
			if (why != "") != tc.unjudged {
				t.Fatalf("outOfTime = %q, want unjudged %v", why, tc.unjudged)
			}
			if tc.unjudged && !strings.Contains(why, "after step 2 the operator made") {
				t.Errorf("outOfTime = %q, want it to name the step and the writes", why)
			}
		})
	}
}

func TestTheSettleLimitScalesWithTheReferenceRunsPace(t *testing.T) {
	ex := &explorer{paces: slowerPaces(
		map[int]pace{-1: {took: time.Second}, 0: {took: 20 * time.Second, writes: 3}},
		map[int]pace{-1: {took: 3 * time.Second}, 0: {took: 10 * time.Second, writes: 5}})}
	for _, tc := range []struct {
		step int
		want time.Duration
	}{
		{-1, settleFloor},     // 4 × 3 s is less than the floor
		{0, 80 * time.Second}, // 4 × the slower run's 20 s
		{1, settleFloor},      // no reference pace: the floor
	} {
		if got := ex.settleLimit(tc.step); got != tc.want {
			t.Errorf("settleLimit(%d) = %s, want %s", tc.step, got, tc.want)
		}
	}
	if got := ex.paces[0].writes; got != 5 {
		t.Errorf("the slower paces keep %d writes after step 1, want the more, 5", got)
	}
}
