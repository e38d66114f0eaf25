package ownership

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTransformCompact(t *testing.T) {
	labels := func() map[string]string { return map[string]string{"app": "web", "tier": "cache"} }
	same := func(a, b map[string]string) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
	tests := []struct {
		name                string
		own, selector, tmpl map[string]string
		// which maps must end as one
		selectorShared, templateShared bool
	}{
		{"equal labels everywhere make one map", labels(), labels(), labels(), true, true},
		{"without labels of its own the template shares the selector's", nil, labels(), labels(), false, true},
		{"a template with more labels keeps its own", labels(), labels(), map[string]string{"app": "web", "tier": "cache", "v": "2"}, true, false},
		{"an empty template stays empty", labels(), labels(), nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Labels: tt.own, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: tt.selector},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tt.tmpl}},
				},
			}
			want := d.DeepCopy()
			want.ManagedFields = nil
			out, err := TransformCompact()(d)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*appsv1.Deployment)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the transform changed what a reader sees:\n got %+v\nwant %+v", got, want)
			}
			first := got.Labels
			if first == nil {
				first = got.Spec.Selector.MatchLabels
			}
			if tt.selectorShared != same(got.Spec.Selector.MatchLabels, got.Labels) {
				t.Errorf("selector shares the object's labels: %v, want %v", !tt.selectorShared, tt.selectorShared)
			}
			if tt.templateShared != same(got.Spec.Template.Labels, first) {
				t.Errorf("template shares an equal map: %v, want %v", !tt.templateShared, tt.templateShared)
			}
			// A deep copy, which is what the cache hands out, has maps of its own.
			c := got.DeepCopy()
			c.Spec.Selector.MatchLabels["x"] = "y"
			if _, leaked := got.Spec.Template.Labels["x"]; leaked {
				t.Error("a change to a deep copy reached the cached object")
			}
		})
	}
}
