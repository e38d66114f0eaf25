package explore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTheDifferentialOracleComparesTheFieldsTheOperatorWrote: a child is compared by the
// fields the managers that wrote its ownerReferences manage, not by what the API server
// defaulted or the cluster's other controllers wrote (a Deployment's revision, which
// differs between a Deployment updated and one made from scratch).
func TestTheDifferentialOracleComparesTheFieldsTheOperatorWrote(t *testing.T) {
	entry := func(manager, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource, FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	operator := entry("shop-operator", "", `{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}},"f:ownerReferences":{"k:{\"uid\":\"u\"}":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:name":{}}}}}}}`)
	controllerManager := entry("kube-controller-manager", "", `{"f:metadata":{"f:annotations":{"f:deployment.kubernetes.io/revision":{}}}}`)
	rollout := entry("kube-controller-manager", "status", `{"f:status":{"f:replicas":{}}}`)
	live := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "shop", "namespace": "ns", "uid": "d",
			"labels":          map[string]any{"app": "shop", "tier": "gold", "added-by-someone": "x"},
			"annotations":     map[string]any{"deployment.kubernetes.io/revision": "2"},
			"ownerReferences": []any{map[string]any{"uid": "u", "kind": "Shop", "name": "shop"}},
		},
		"spec": map[string]any{
			"replicas":             int64(1),
			"revisionHistoryLimit": int64(10), // defaulted
			"template":             map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "imagePullPolicy": "IfNotPresent"}}, "dnsPolicy": "ClusterFirst"}},
		},
		"status": map[string]any{"replicas": int64(1)},
	}
	want := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "shop", "namespace": "ns", "uid": "d",
			"labels":          map[string]any{"app": "shop", "tier": "gold"},
			"ownerReferences": []any{map[string]any{"uid": "u", "kind": "Shop", "name": "shop"}},
		},
		"spec": map[string]any{
			"replicas": int64(1),
			// A list is compared whole: its elements are keyed, not named fields.
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "imagePullPolicy": "IfNotPresent"}}}},
		},
	}
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    map[string]any
	}{
		{"the operator's fields alone", []metav1.ManagedFieldsEntry{operator, controllerManager, rollout}, want},
		{"no manager wrote its owner: the object whole", []metav1.ManagedFieldsEntry{controllerManager}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &unstructured.Unstructured{Object: live}
			o = o.DeepCopy()
			o.SetManagedFields(tc.entries)
			got := writtenFields(o)
			want := tc.want
			if want == nil {
				want = o.Object
			}
			if d := cmp.Diff(want, got.Object); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
