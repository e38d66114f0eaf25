package conditions_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/conditions"
)

func TestNegativePolarity(t *testing.T) {
	for typ, want := range map[string]bool{
		conditions.Degraded:    true,
		conditions.Stalled:     true,
		conditions.Ready:       false,
		conditions.Available:   false,
		conditions.Progressing: false,
		conditions.Reconciling: true,
		"Custom":               false,
	} {
		if got := conditions.NegativePolarity(typ); got != want {
			t.Errorf("NegativePolarity(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestSummarize(t *testing.T) {
	const (
		T = metav1.ConditionTrue
		F = metav1.ConditionFalse
		U = metav1.ConditionUnknown
	)
	available := cond(conditions.Available, T, "Serving", "3 replicas", 0, earlier)
	unavailable := cond(conditions.Available, F, "NoReplicas", "0 of 3 replicas", 0, earlier)
	availableUnknown := cond(conditions.Available, U, "Starting", "rolling out", 0, earlier)
	progressing := cond(conditions.Progressing, T, "NewReplicaSetAvailable", "", 0, earlier)
	degraded := cond(conditions.Degraded, T, "CrashLoop", "container exits", 0, earlier)
	healthy := cond(conditions.Degraded, F, "AsExpected", "", 0, earlier)
	degradedUnknown := cond(conditions.Degraded, U, "Probing", "probe pending", 0, earlier)

	tests := []struct {
		name  string
		conds []metav1.Condition
		from  []string
		want  metav1.Condition
	}{{
		name:  "is True when every positive condition is True and every negative one False",
		conds: []metav1.Condition{available, progressing, healthy},
		from:  []string{conditions.Available, conditions.Progressing, conditions.Degraded},
		want:  cond(conditions.Ready, T, conditions.AllConditionsMet, "", 0, nowSec),
	}, {
		name:  "is True when a negative condition is absent",
		conds: []metav1.Condition{available},
		from:  []string{conditions.Available, conditions.Degraded},
		want:  cond(conditions.Ready, T, conditions.AllConditionsMet, "", 0, nowSec),
	}, {
		name: "is True when summarizing nothing",
		want: cond(conditions.Ready, T, conditions.AllConditionsMet, "", 0, nowSec),
	}, {
		name:  "is False with the reason and message of a bad positive condition",
		conds: []metav1.Condition{unavailable, healthy},
		from:  []string{conditions.Available, conditions.Degraded},
		want:  cond(conditions.Ready, F, "NoReplicas", "0 of 3 replicas", 0, nowSec),
	}, {
		name:  "is False with the reason and message of a True negative condition",
		conds: []metav1.Condition{available, degraded},
		from:  []string{conditions.Available, conditions.Degraded},
		want:  cond(conditions.Ready, F, "CrashLoop", "container exits", 0, nowSec),
	}, {
		name:  "is False from the first bad condition in the order given",
		conds: []metav1.Condition{unavailable, degraded},
		from:  []string{conditions.Degraded, conditions.Available},
		want:  cond(conditions.Ready, F, "CrashLoop", "container exits", 0, nowSec),
	}, {
		name:  "is False when a bad condition follows an undecided one",
		conds: []metav1.Condition{availableUnknown, degraded},
		from:  []string{conditions.Available, conditions.Degraded},
		want:  cond(conditions.Ready, F, "CrashLoop", "container exits", 0, nowSec),
	}, {
		name:  "is Unknown with the reason and message of an Unknown condition",
		conds: []metav1.Condition{availableUnknown, healthy},
		from:  []string{conditions.Available, conditions.Degraded},
		want:  cond(conditions.Ready, U, "Starting", "rolling out", 0, nowSec),
	}, {
		name:  "is Unknown when a negative condition is Unknown",
		conds: []metav1.Condition{available, degradedUnknown},
		from:  []string{conditions.Available, conditions.Degraded},
		want:  cond(conditions.Ready, U, "Probing", "probe pending", 0, nowSec),
	}, {
		name:  "is Unknown when a positive condition is absent",
		conds: []metav1.Condition{healthy},
		from:  []string{conditions.Available, conditions.Degraded},
		want:  cond(conditions.Ready, U, conditions.NotReported, "Available is not reported yet", 0, nowSec),
	}, {
		name:  "is Unknown from the first undecided condition in the order given",
		conds: []metav1.Condition{availableUnknown},
		from:  []string{conditions.Progressing, conditions.Available},
		want:  cond(conditions.Ready, U, conditions.NotReported, "Progressing is not reported yet", 0, nowSec),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &bare{conditions: append([]metav1.Condition(nil), tt.conds...)}
			if !conditions.Summarize(obj, conditions.Ready, tt.from...) {
				t.Error("Summarize() reported no change for a new summary")
			}
			if diff := cmp.Diff(tt.want, *conditions.Find(obj, conditions.Ready), ignoreTime); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if conditions.Summarize(obj, conditions.Ready, tt.from...) {
				t.Error("Summarize() reported a change for an unchanged summary")
			}
		})
	}
}
