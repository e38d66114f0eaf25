package explore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestObjectsNamedAfterTheirRunCompareAcrossRuns(t *testing.T) {
	tenant := func(namespace string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "corpus.example.com/v1", "kind": "Tenant",
			"metadata": map[string]any{"name": namespace, "labels": map[string]any{RunLabel: namespace}},
			"spec":     map[string]any{"tier": "gold"},
		}}
	}
	settings := func(namespace string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": namespace + "-settings", "namespace": namespace},
		}}
	}
	state := func(namespace string) state {
		return normalise(map[string]*unstructured.Unstructured{
			keyOf("Tenant", namespace, namespace):                tenant(namespace),
			keyOf("ConfigMap", namespace+"-settings", namespace): settings(namespace),
		}, namespace, map[string]bool{"Tenant": true})
	}
	a, b := state("explore-abcde"), state("explore-fghij")
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("two runs' states differ by their namespaces (-a +b):\n%s", d)
	}
	for _, key := range []string{"Tenant {namespace}", "ConfigMap {namespace}-settings"} {
		if _, ok := a[key]; !ok {
			t.Errorf("no %q in the state: %v", key, mapsKeys(a))
		}
	}
}

func TestAClusterScopedObjectsEventIsKeyedWithoutANamespace(t *testing.T) {
	for _, tc := range []struct{ event, want string }{
		{`{"type":"ADDED","object":{"metadata":{"name":"explore-abcde"}}}`, "/explore-abcde"},
		{`{"type":"MODIFIED","object":{"metadata":{"namespace":"explore-abcde","name":"settings"}}}`, "explore-abcde/settings"},
		{`{"type":"BOOKMARK","object":{"metadata":{"name":"x"}}}`, ""},
	} {
		if got := eventKey([]byte(tc.event)); got != tc.want {
			t.Errorf("eventKey(%s) = %q, want %q", tc.event, got, tc.want)
		}
	}
}

func TestAPodScheduledOnAnotherNodeIsTheSamePod(t *testing.T) {
	pod := func(node string) state {
		spec := map[string]any{"containers": []any{map[string]any{"name": "command", "image": "busybox:1.36"}}}
		if node != "" {
			spec["nodeName"] = node
		}
		return normalise(map[string]*unstructured.Unstructured{"Pod now": {Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "now", "namespace": "explore-abcde"},
			"spec":     spec,
		}}}, "explore-abcde", map[string]bool{"At": true})
	}
	if d := cmp.Diff(pod("kwok-node-0"), pod("kwok-node-1")); d != "" {
		t.Errorf("a pod placed on another node differs (-a +b):\n%s", d)
	}
	if cmp.Equal(pod("kwok-node-0"), pod("")) {
		t.Errorf("a pod scheduled compares equal to one not scheduled")
	}
}

func TestAConditionLeftAsItWasIsRecovered(t *testing.T) {
	at := func(conds ...map[string]any) state {
		l := []any{}
		for _, c := range conds {
			l = append(l, c)
		}
		return state{"At now": {"kind": "At", "status": map[string]any{"observedGeneration": "<current>", "conditions": l}}}
	}
	succeeded := func(og, message string) map[string]any {
		return map[string]any{"type": "Succeeded", "status": "True", "reason": "CommandSucceeded", "message": message, "observedGeneration": og}
	}
	for _, tc := range []struct {
		name          string
		before, after state
		recovered     bool
	}{
		{"the same condition, further behind: not written again", at(succeeded("<current>", "done")), at(succeeded("<2 behind>", "done")), true},
		{"the same condition, written again", at(succeeded("<current>", "done")), at(succeeded("<current>", "done")), true},
		{"a condition further behind that says something else", at(succeeded("<current>", "done")), at(succeeded("<2 behind>", "failed")), false},
		{"a condition less behind than before", at(succeeded("<2 behind>", "done")), at(succeeded("<current>", "done")), false},
		{"a condition gone", at(succeeded("<current>", "done")), at(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := recovered(transition{object: "At now", path: []string{"command"}}, tc.before, tc.after)
			if got := len(vs) == 0; got != tc.recovered {
				t.Errorf("recovered = %v, want %v: %v", got, tc.recovered, vs)
			}
		})
	}
}
