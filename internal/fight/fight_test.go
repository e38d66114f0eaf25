package fight

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestManagersNamesWhoOwnsAPath(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "operator", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:command":{},"f:image":{}}}}}}}`)},
		{Manager: "replica-fighter", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "prober", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{"f:status":{},"f:reason":{}}}}}`)},
	}
	tests := []struct {
		name, path, self string
		want             []string
	}{
		{name: "a field", path: "spec.replicas", self: "operator", want: []string{"replica-fighter"}},
		{name: "a list element by its key", path: "status.conditions[Available].status", self: "operator", want: []string{"prober"}},
		{name: "a list element by its key, another's", path: "status.conditions[Ready].status", self: "operator", want: nil},
		{name: "a list element by its index", path: "spec.template.spec.containers[0].image", self: "", want: []string{"operator"}},
		{name: "an element of an atomic list", path: "spec.template.spec.containers[web].command[1]", self: "", want: []string{"operator"}},
		{name: "no one else", path: "spec.template.spec.containers[0].command[1]", self: "operator", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Managers(entries, []string{tt.path}, tt.self)
			if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
				t.Errorf("Managers(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

func TestDiffNamesTheFieldsWrittenBack(t *testing.T) {
	live := map[string]any{"phase": "Broken", "replicas": float64(2), "conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "then"},
		map[string]any{"type": "Available", "status": "False", "reason": "ProbeFailed", "lastTransitionTime": "then"},
	}}
	desired := map[string]any{"phase": "Sized", "replicas": float64(2), "selector": "app=web", "conditions": []any{
		map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastTransitionTime": "now"},
		map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "now"},
	}}
	got := Diff(live, desired, "status")
	want := []string{
		`status.conditions[Available].reason: "ProbeFailed" → "MinimumReplicasAvailable"`,
		`status.conditions[Available].status: "False" → "True"`,
		`status.phase: "Broken" → "Sized"`,
		`status.selector: (unset) → "app=web"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Diff =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
