package explain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRecentEventsLeaveHistoryOut(t *testing.T) {
	changed := time.Date(2026, 1, 1, 12, 0, 10, 0, time.UTC)
	pod := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "PodScheduled", "lastTransitionTime": "2026-01-01T12:00:05Z"},
		map[string]any{"type": "Ready", "lastTransitionTime": changed.Format(time.RFC3339)},
	}}}}
	at := func(d time.Duration, reason string) Event { return Event{Reason: reason, Last: changed.Add(d)} }
	for _, tc := range []struct {
		name   string
		object *unstructured.Unstructured
		events []Event // newest first
		want   []string
	}{
		{"an event older than the latest change of state is history", pod,
			[]Event{at(time.Second, "Failed"), at(-5*time.Second, "FailedScheduling")}, []string{"Failed"}},
		{"an event in the second before the change is of it", pod,
			[]Event{at(-999*time.Millisecond, "Failed")}, []string{"Failed"}},
		{"the three latest are kept", pod,
			[]Event{at(4*time.Second, "D"), at(3*time.Second, "C"), at(2*time.Second, "B"), at(time.Second, "A")}, []string{"D", "C", "B"}},
		{"an object without conditions keeps its latest", &unstructured.Unstructured{Object: map[string]any{}},
			[]Event{at(-time.Hour, "Failed")}, []string{"Failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range recent(tc.events, tc.object) {
				got = append(got, e.Reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("recent (-want +got):\n%s", diff)
			}
		})
	}
}
