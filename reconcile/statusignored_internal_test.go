package reconcile

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestAnUpdateIsStatusOnlyWhenNothingButTheStatusAndTheWriteChanged(t *testing.T) {
	budget := func(change func(*policyv1.PodDisruptionBudget)) client.Object {
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", ResourceVersion: "1", Generation: 1, Labels: map[string]string{"app": "db"}},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1))},
		}
		change(pdb)
		return pdb
	}
	unstructuredBudget := func(change func(*unstructured.Unstructured)) client.Object {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
			"metadata": map[string]any{"namespace": "ns", "name": "db", "resourceVersion": "1"},
			"spec":     map[string]any{"minAvailable": int64(1)},
		}}
		change(u)
		return u
	}
	old := budget(func(*policyv1.PodDisruptionBudget) {})
	for _, tc := range []struct {
		name       string
		old, new   client.Object
		statusOnly bool
	}{
		{"the disruption controller's status write", old, budget(func(p *policyv1.PodDisruptionBudget) {
			p.ResourceVersion, p.Status.CurrentHealthy, p.Status.ObservedGeneration = "2", 1, 1
		}), true},
		{"a write that changed nothing", old, budget(func(p *policyv1.PodDisruptionBudget) { p.ResourceVersion = "2" }), true},
		{"managed fields alone", old, budget(func(p *policyv1.PodDisruptionBudget) {
			p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
		}), true},
		{"the spec", old, budget(func(p *policyv1.PodDisruptionBudget) {
			p.ResourceVersion, p.Spec.MinAvailable = "2", ptr.To(intstr.FromInt32(2))
		}), false},
		{"a label, with the status", old, budget(func(p *policyv1.PodDisruptionBudget) {
			p.Labels, p.Status.CurrentHealthy = map[string]string{"app": "other"}, 1
		}), false},
		{"an annotation", old, budget(func(p *policyv1.PodDisruptionBudget) { p.Annotations = map[string]string{"a": "b"} }), false},
		{"the owners", old, budget(func(p *policyv1.PodDisruptionBudget) { p.OwnerReferences = []metav1.OwnerReference{{Name: "x"}} }), false},
		{"the deletion", old, budget(func(p *policyv1.PodDisruptionBudget) { p.DeletionTimestamp = &metav1.Time{} }), false},
		{"an unstructured status", unstructuredBudget(func(*unstructured.Unstructured) {}), unstructuredBudget(func(u *unstructured.Unstructured) {
			u.SetResourceVersion("2")
			u.Object["status"] = map[string]any{"currentHealthy": int64(1)}
		}), true},
		{"an unstructured spec", unstructuredBudget(func(*unstructured.Unstructured) {}), unstructuredBudget(func(u *unstructured.Unstructured) {
			u.Object["spec"] = map[string]any{"minAvailable": int64(2)}
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusOnly(tc.old, tc.new); got != tc.statusOnly {
				t.Errorf("statusOnly = %v, want %v", got, tc.statusOnly)
			}
		})
	}
}
