package conditions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/conditions"
)

// object is a typical API type: it has metadata, so a generation, and conditions.
type object struct {
	metav1.ObjectMeta
	conditions []metav1.Condition
}

func (o *object) GetConditions() []metav1.Condition  { return o.conditions }
func (o *object) SetConditions(c []metav1.Condition) { o.conditions = c }

// bare has conditions but no generation.
type bare struct{ conditions []metav1.Condition }

func (b *bare) GetConditions() []metav1.Condition  { return b.conditions }
func (b *bare) SetConditions(c []metav1.Condition) { b.conditions = c }

var (
	earlier = metav1.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	now     = time.Date(2024, 5, 1, 10, 0, 0, 750_000_000, time.UTC)
	nowSec  = metav1.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
)

func cond(typ string, status metav1.ConditionStatus, reason, msg string, gen int64, at metav1.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: at}
}

func TestSet(t *testing.T) {
	const (
		T = metav1.ConditionTrue
		F = metav1.ConditionFalse
		U = metav1.ConditionUnknown
	)
	ready := cond(conditions.Ready, T, "Up", "all good", 3, earlier)
	avail := cond(conditions.Available, T, "Serving", "", 3, earlier)

	tests := []struct {
		name    string
		before  []metav1.Condition
		set     metav1.Condition
		want    []metav1.Condition
		changed bool
	}{{
		name:    "appends a new condition at the given time truncated to whole seconds",
		before:  []metav1.Condition{avail},
		set:     metav1.Condition{Type: conditions.Ready, Status: T, Reason: "Up", Message: "all good"},
		want:    []metav1.Condition{avail, cond(conditions.Ready, T, "Up", "all good", 3, nowSec)},
		changed: true,
	}, {
		name:    "reports no change for an identical condition",
		before:  []metav1.Condition{ready},
		set:     cond(conditions.Ready, T, "Up", "all good", 0, metav1.Time{}),
		want:    []metav1.Condition{ready},
		changed: false,
	}, {
		name:    "keeps lastTransitionTime when only the reason changes",
		before:  []metav1.Condition{ready},
		set:     cond(conditions.Ready, T, "StillUp", "all good", 0, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, T, "StillUp", "all good", 3, earlier)},
		changed: true,
	}, {
		name:    "keeps lastTransitionTime when only the message changes",
		before:  []metav1.Condition{ready},
		set:     cond(conditions.Ready, T, "Up", "better", 0, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, T, "Up", "better", 3, earlier)},
		changed: true,
	}, {
		name:    "moves lastTransitionTime when the status changes",
		before:  []metav1.Condition{ready},
		set:     cond(conditions.Ready, F, "Down", "broken", 0, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, F, "Down", "broken", 3, nowSec)},
		changed: true,
	}, {
		name:    "ignores the given lastTransitionTime when the status stays",
		before:  []metav1.Condition{ready},
		set:     cond(conditions.Ready, T, "Checking", "", 0, metav1.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)),
		want:    []metav1.Condition{cond(conditions.Ready, T, "Checking", "", 3, earlier)},
		changed: true,
	}, {
		name:    "keeps the position of an existing condition",
		before:  []metav1.Condition{ready, avail},
		set:     cond(conditions.Ready, F, "Down", "", 0, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, F, "Down", "", 3, nowSec), avail},
		changed: true,
	}, {
		name:    "sets observedGeneration from the object, over the caller's value",
		set:     cond(conditions.Ready, T, "Up", "", 99, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, T, "Up", "", 3, nowSec)},
		changed: true,
	}, {
		name:    "counts a new observedGeneration alone as a change that keeps lastTransitionTime",
		before:  []metav1.Condition{cond(conditions.Ready, T, "Up", "all good", 2, earlier)},
		set:     cond(conditions.Ready, T, "Up", "all good", 0, metav1.Time{}),
		want:    []metav1.Condition{ready},
		changed: true,
	}, {
		name:    "stores InvalidReason and names the bad reason in the message",
		set:     cond(conditions.Ready, F, "not valid", "disk full", 0, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, F, conditions.InvalidReason, conditions.ValidateReason("not valid").Error()+": disk full", 3, nowSec)},
		changed: true,
	}, {
		name:    "stores InvalidReason for an empty reason",
		set:     cond(conditions.Ready, T, "", "", 0, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, T, conditions.InvalidReason, `invalid condition reason "": must not be empty`, 3, nowSec)},
		changed: true,
	}, {
		name:    "stores an invalid status as Unknown and says so in the message",
		set:     cond(conditions.Ready, "Yes", "Up", "", 0, metav1.Time{}),
		want:    []metav1.Condition{cond(conditions.Ready, U, "Up", `invalid condition status "Yes": must be True, False or Unknown`, 3, nowSec)},
		changed: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &object{ObjectMeta: metav1.ObjectMeta{Generation: 3}, conditions: append([]metav1.Condition(nil), tt.before...)}
			if tt.set.LastTransitionTime.IsZero() {
				tt.set.LastTransitionTime = metav1.NewTime(now) // the time of the transition, if there is one
			}
			if got := conditions.Set(obj, tt.set); got != tt.changed {
				t.Errorf("Set() = %v, want %v", got, tt.changed)
			}
			if diff := cmp.Diff(tt.want, obj.conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetKeepsObservedGenerationOfObjectsWithoutOne(t *testing.T) {
	obj := &bare{}
	conditions.Set(obj, cond(conditions.Ready, metav1.ConditionTrue, "Up", "", 7, metav1.Time{}))
	if got := obj.conditions[0].ObservedGeneration; got != 7 {
		t.Errorf("observedGeneration = %d, want 7", got)
	}
}

func TestSetTrimsMessagesToTheAPILimit(t *testing.T) {
	const limit = 32768
	tests := []struct {
		name    string
		message string
		want    int
	}{
		{"keeps a message at the limit", strings.Repeat("a", limit), limit},
		{"cuts before a character that would be split", strings.Repeat("a", limit-1) + "é", limit - 1},
		{"cuts before a four-byte character", strings.Repeat("a", limit-2) + "😀", limit - 2},
		{"cuts bytes that are not UTF-8 at the limit", strings.Repeat("\x80", limit+10), limit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &object{}
			conditions.MarkFalse(obj, conditions.Ready, "TooLong", "%s", tt.message)
			if got := len(obj.conditions[0].Message); got != tt.want {
				t.Errorf("message length = %d, want %d", got, tt.want)
			}
		})
	}
}

var ignoreTime = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

func TestMarkSetsStatusReasonAndFormattedMessage(t *testing.T) {
	tests := []struct {
		name string
		mark func(conditions.Setter) bool
		want metav1.Condition
	}{{
		name: "True",
		mark: func(o conditions.Setter) bool {
			return conditions.MarkTrue(o, conditions.Available, "Serving", "%d replicas", 3)
		},
		want: cond(conditions.Available, metav1.ConditionTrue, "Serving", "3 replicas", 1, nowSec),
	}, {
		name: "False",
		mark: func(o conditions.Setter) bool {
			return conditions.MarkFalse(o, conditions.Available, "Down", "100% broken")
		},
		want: cond(conditions.Available, metav1.ConditionFalse, "Down", "100% broken", 1, nowSec),
	}, {
		name: "Unknown",
		mark: func(o conditions.Setter) bool { return conditions.MarkUnknown(o, conditions.Available, "Starting", "") },
		want: cond(conditions.Available, metav1.ConditionUnknown, "Starting", "", 1, nowSec),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &object{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
			if !tt.mark(obj) {
				t.Error("first mark reported no change")
			}
			if tt.mark(obj) {
				t.Error("repeated mark reported a change")
			}
			if ltt := obj.conditions[0].LastTransitionTime; ltt.IsZero() || ltt.Nanosecond() != 0 {
				t.Errorf("lastTransitionTime = %v, want the current time in whole seconds", ltt)
			}
			if diff := cmp.Diff([]metav1.Condition{tt.want}, obj.conditions, ignoreTime); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShorthandsUseTheRealClock(t *testing.T) {
	tests := []struct {
		name string
		set  func(conditions.Setter) bool
		want metav1.ConditionStatus
	}{
		{"Set", func(o conditions.Setter) bool {
			return conditions.Set(o, metav1.Condition{Type: conditions.Ready, Status: metav1.ConditionTrue, Reason: "Up"})
		}, metav1.ConditionTrue},
		{"MarkTrue", func(o conditions.Setter) bool { return conditions.MarkTrue(o, conditions.Ready, "Up", "%s", "ok") }, metav1.ConditionTrue},
		{"MarkFalse", func(o conditions.Setter) bool { return conditions.MarkFalse(o, conditions.Ready, "Down", "") }, metav1.ConditionFalse},
		{"MarkUnknown", func(o conditions.Setter) bool { return conditions.MarkUnknown(o, conditions.Ready, "Wait", "") }, metav1.ConditionUnknown},
		{"Summarize", func(o conditions.Setter) bool { return conditions.Summarize(o, conditions.Ready) }, metav1.ConditionTrue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &object{}
			if !tt.set(obj) {
				t.Fatal("reported no change")
			}
			c := conditions.Find(obj, conditions.Ready)
			if c.Status != tt.want || c.LastTransitionTime.IsZero() || c.LastTransitionTime.Nanosecond() != 0 {
				t.Errorf("got status %s at %v, want %s at a whole second", c.Status, c.LastTransitionTime, tt.want)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	obj := &object{conditions: []metav1.Condition{
		cond(conditions.Available, metav1.ConditionTrue, "Serving", "", 0, earlier),
		cond(conditions.Degraded, metav1.ConditionFalse, "Fine", "", 0, earlier),
		cond(conditions.Progressing, metav1.ConditionUnknown, "Checking", "", 0, earlier),
	}}
	tests := []struct {
		typ                    string
		found                  bool
		isTrue, isFalse, isUnk bool
	}{
		{conditions.Available, true, true, false, false},
		{conditions.Degraded, true, false, true, false},
		{conditions.Progressing, true, false, false, true},
		{conditions.Ready, false, false, false, true}, // absent counts as Unknown
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			if got := conditions.Find(obj, tt.typ); (got != nil) != tt.found || got != nil && got.Type != tt.typ {
				t.Errorf("Find() = %v, want found=%v", got, tt.found)
			}
			if got := conditions.IsTrue(obj, tt.typ); got != tt.isTrue {
				t.Errorf("IsTrue() = %v, want %v", got, tt.isTrue)
			}
			if got := conditions.IsFalse(obj, tt.typ); got != tt.isFalse {
				t.Errorf("IsFalse() = %v, want %v", got, tt.isFalse)
			}
			if got := conditions.IsUnknown(obj, tt.typ); got != tt.isUnk {
				t.Errorf("IsUnknown() = %v, want %v", got, tt.isUnk)
			}
		})
	}
}

func TestRemove(t *testing.T) {
	a := cond(conditions.Available, metav1.ConditionTrue, "Serving", "", 0, earlier)
	r := cond(conditions.Ready, metav1.ConditionTrue, "Up", "", 0, earlier)
	d := cond(conditions.Degraded, metav1.ConditionFalse, "Fine", "", 0, earlier)
	tests := []struct {
		name    string
		remove  string
		want    []metav1.Condition
		removed bool
	}{
		{"removes a condition and keeps the order of the rest", conditions.Ready, []metav1.Condition{a, d}, true},
		{"reports false for an absent condition", conditions.Progressing, []metav1.Condition{a, r, d}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &object{conditions: []metav1.Condition{a, r, d}}
			if got := conditions.Remove(obj, tt.remove); got != tt.removed {
				t.Errorf("Remove() = %v, want %v", got, tt.removed)
			}
			if diff := cmp.Diff(tt.want, obj.conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestList(t *testing.T) {
	t.Run("sets observedGeneration to the given generation", func(t *testing.T) {
		var conds []metav1.Condition
		conditions.MarkTrue(conditions.List(&conds, 5), conditions.Ready, "Up", "")
		if len(conds) != 1 || conds[0].ObservedGeneration != 5 {
			t.Errorf("conditions = %v, want one with observedGeneration 5", conds)
		}
	})
	t.Run("reads a nil pointer as empty and ignores writes", func(t *testing.T) {
		l := conditions.List(nil, 1)
		conditions.MarkTrue(l, conditions.Ready, "Up", "")
		if got := l.GetConditions(); got != nil {
			t.Errorf("GetConditions() = %v, want nil", got)
		}
	})
}

func TestValidateReason(t *testing.T) {
	tests := []struct {
		reason string
		valid  bool
	}{
		{"A", true},
		{"MinimumReplicasAvailable", true},
		{"Waiting_For:Pods,1", true},
		{"Ends_", true},
		{strings.Repeat("a", 1024), true},
		{"", false},
		{strings.Repeat("a", 1025), false},
		{"1Starts", false},
		{"_Starts", false},
		{"Ends:", false},
		{"Ends,", false},
		{"Has Space", false},
		{"Has-Dash", false},
		{"Ünicode", false},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			err := conditions.ValidateReason(tt.reason)
			if (err == nil) != tt.valid {
				t.Fatalf("ValidateReason(%q) = %v, want valid=%v", tt.reason, err, tt.valid)
			}
			if err != nil && len(tt.reason) <= 1024 && !strings.Contains(err.Error(), `"`+tt.reason+`"`) {
				t.Errorf("error %q does not name the reason", err)
			}
		})
	}
}
