package reconciletest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// StorePastSchema changes the spec of obj, an object of the Env's operator's kinds
// (namespaced or cluster-scoped), as etcd stores it, behind the API server and its schema,
// and gives it the next generation, as the API server would for a change of spec: the way
// to hand an operator a spec its CRD's schema refuses, as a spec written under an older
// schema, or straight to etcd, reaches it. change
// receives the stored spec, decoded from JSON (numbers are float64; set int64 or float64).
// It returns the generation given, which the operator's status should come to observe.
func (e *Env) StorePastSchema(t testing.TB, obj client.Object, change func(spec map[string]any)) (generation int64) {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, e.Scheme())
	if err != nil {
		t.Fatalf("controlplane: StorePastSchema: %v", err)
	}
	mapping, err := e.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("controlplane: StorePastSchema: %v", err)
	}
	// The API server keys a cluster-scoped object by its name alone, with no namespace's
	// segment (an empty one would name no object).
	key := fmt.Sprintf("/registry/%s/%s/%s/%s", mapping.Resource.Group, mapping.Resource.Resource, obj.GetNamespace(), obj.GetName())
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		key = fmt.Sprintf("/registry/%s/%s/%s", mapping.Resource.Group, mapping.Resource.Resource, obj.GetName())
	}
	err = e.operator.ControlPlane.RewriteStored(t.Context(), key, func(stored map[string]any) {
		spec, _ := stored["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			stored["spec"] = spec
		}
		change(spec)
		md, _ := stored["metadata"].(map[string]any)
		g, _ := md["generation"].(float64)
		generation = int64(g) + 1
		md["generation"] = generation
	})
	if err != nil {
		t.Fatalf("controlplane: StorePastSchema %s %s: %v", gvk.Kind, client.ObjectKeyFromObject(obj), err)
	}
	return generation
}
