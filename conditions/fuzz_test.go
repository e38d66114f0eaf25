package conditions_test

import (
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/conditions"
)

// FuzzSet drives a sequence of sets, summaries and removals from the fuzzer's
// bytes and checks the invariants after every step: at most one condition per
// type, a transition time that moves only with the status and never backwards,
// and a result the API server would accept.
func FuzzSet(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, "AsExpected", "all good")
	f.Add([]byte{5, 10, 15, 20, 0x40, 0x80}, "", "")
	f.Add([]byte{1, 1, 1}, "not valid", "message\xff")
	f.Fuzz(func(t *testing.T, ops []byte, reason, message string) {
		types := []string{conditions.Ready, conditions.Available, conditions.Degraded, conditions.Stalled}
		statuses := []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown, "Bogus"}
		clock := clocktesting.NewFakePassiveClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
		obj := &object{}

		for i, op := range ops {
			clock.SetTime(clock.Now().Add(time.Duration(op>>5) * 300 * time.Millisecond))
			before := append([]metav1.Condition(nil), obj.conditions...)
			obj.Generation = int64(i)
			typ := types[int(op)%len(types)]
			var changed bool
			at := metav1.NewTime(clock.Now().Truncate(time.Second))
			switch op / 4 % 4 {
			case 0, 1:
				c := metav1.Condition{Type: typ, Status: statuses[int(op/16)%len(statuses)], Reason: reason, Message: message,
					LastTransitionTime: metav1.NewTime(clock.Now())}
				changed = conditions.Set(obj, c)
				if conditions.Set(obj, c) {
					t.Fatalf("setting %v twice reported a second change", c)
				}
			case 2:
				changed = conditions.Summarize(obj, typ, types...)
				at = metav1.Time{} // Summarize transitions at the current time
			case 3:
				changed = conditions.Remove(obj, typ)
			}
			if !changed && !slices.Equal(before, obj.conditions) {
				t.Fatalf("reported no change but conditions went from %v to %v", before, obj.conditions)
			}
			check(t, before, obj.conditions, at, utf8.ValidString(message))
		}
	})
}

// check's now is the time a transition must have, or zero for the current time.
func check(t *testing.T, before, after []metav1.Condition, now metav1.Time, validUTF8 bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range after {
		if seen[c.Type] {
			t.Fatalf("two conditions of type %s in %v", c.Type, after)
		}
		seen[c.Type] = true
		if err := conditions.ValidateReason(c.Reason); err != nil {
			t.Fatalf("stored %v", err)
		}
		if c.Status != metav1.ConditionTrue && c.Status != metav1.ConditionFalse && c.Status != metav1.ConditionUnknown {
			t.Fatalf("stored status %q", c.Status)
		}
		if len(c.Message) > 32768 || validUTF8 && !utf8.ValidString(c.Message) {
			t.Fatalf("stored a message of %d bytes, valid UTF-8: %v", len(c.Message), utf8.ValidString(c.Message))
		}
		old := findIn(before, c.Type)
		switch {
		case old == nil || old.Status != c.Status:
			if !now.IsZero() && !c.LastTransitionTime.Equal(&now) || c.LastTransitionTime.Nanosecond() != 0 {
				t.Fatalf("new status at %v, want %v in whole seconds", c.LastTransitionTime, now)
			}
		case !c.LastTransitionTime.Equal(&old.LastTransitionTime):
			t.Fatalf("lastTransitionTime moved from %v to %v without a status change", old.LastTransitionTime, c.LastTransitionTime)
		}
	}
}

func findIn(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
