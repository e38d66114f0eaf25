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
