package explore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTheDifferentialOracleLeavesOutWhatOnlyTheClusterWrote: a child is compared without
// the fields only the cluster's other controllers wrote (a Deployment's revision, which
// differs between a Deployment updated and one made from scratch), and with everything the
// operator wrote or the API server defaulted.
func TestTheDifferentialOracleLeavesOutWhatOnlyTheClusterWrote(t *testing.T) {
	entry := func(manager, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource, FieldsV1: metav1.NewFieldsV1(fields)}
	}
	operator := entry("shop-operator", "", `{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}},"f:ownerReferences":{"k:{\"uid\":\"u\"}":{}}},"f:spec":{"f:replicas":{}}}`)
	controllerManager := entry("kube-controller-manager", "", `{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}},"f:labels":{"f:tier":{}}}}`)
	rollout := entry("kube-controller-manager", "status", `{"f:status":{"f:replicas":{}}}`)
	live := func() map[string]any {
		return map[string]any{
			"kind": "Deployment",
			"metadata": map[string]any{
				"name":            "shop",
				"labels":          map[string]any{"app": "shop", "tier": "gold"},
				"annotations":     map[string]any{"deployment.kubernetes.io/revision": "2", "theirs": "x"},
				"ownerReferences": []any{map[string]any{"uid": "u"}},
			},
			"spec":   map[string]any{"replicas": int64(1), "revisionHistoryLimit": int64(10)},
			"status": map[string]any{"replicas": int64(1)},
		}
	}
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		// gone are the annotations left out.
		gone []string
	}{
		{"another controller's annotation left out, a label both wrote kept", []metav1.ManagedFieldsEntry{operator, controllerManager, rollout}, []string{"deployment.kubernetes.io/revision"}},
		{"the operator alone: whole", []metav1.ManagedFieldsEntry{operator}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &unstructured.Unstructured{Object: live()}
			o.SetManagedFields(tc.entries)
			want := o.DeepCopy()
			for _, a := range tc.gone {
				unstructured.RemoveNestedField(want.Object, "metadata", "annotations", a)
			}
			if d := cmp.Diff(want.Object, writtenFields(o).Object); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
