package ownership

import (
	"reflect"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

func TestTransformCompactSharesAServicesAndABudgetsSelectorEqualToTheirLabels(t *testing.T) {
	labels := func() map[string]string { return map[string]string{"app": "web"} }
	other := func() map[string]string { return map[string]string{"app": "db"} }
	tests := []struct {
		name   string
		obj    func(own, selector map[string]string) client.Object
		own    map[string]string
		sel    map[string]string
		shared bool
	}{
		{"a Service selecting its own labels", labelledService, labels(), labels(), true},
		{"a Service selecting other labels", labelledService, labels(), other(), false},
		{"a Service without labels", labelledService, nil, labels(), false},
		{"a PodDisruptionBudget selecting its own labels", labelledBudget, labels(), labels(), true},
		{"a PodDisruptionBudget selecting other labels", labelledBudget, labels(), other(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj(tt.own, tt.sel)
			want := obj.DeepCopyObject()
			out, err := TransformCompact()(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out, want) {
				t.Errorf("the transform changed what a reader sees:\n got %+v\nwant %+v", out, want)
			}
			var selector map[string]string
			switch o := out.(type) {
			case *corev1.Service:
				selector = o.Spec.Selector
			case *policyv1.PodDisruptionBudget:
				selector = o.Spec.Selector.MatchLabels
			}
			got := reflect.ValueOf(selector).Pointer() == reflect.ValueOf(out.(client.Object).GetLabels()).Pointer()
			if got != tt.shared {
				t.Errorf("selector shares the object's labels: %v, want %v", got, tt.shared)
			}
		})
	}
}

func labelledService(own, selector map[string]string) client.Object {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Labels: own}, Spec: corev1.ServiceSpec{Selector: selector}}
}

func labelledBudget(own, selector map[string]string) client.Object {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Labels: own},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}},
	}
}

// Two objects decoded apart share one copy of each string both repeat, and read the same.
func TestTransformCompactSharesTheStringsObjectsRepeat(t *testing.T) {
	// Each call makes strings of their own, as a decoder does for each object.
	decoded := func(name string) *corev1.Pod {
		own := func(s string) string { return string([]byte(s)) }
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       own("shop"),
			Name:            name,
			Labels:          map[string]string{own("app.kubernetes.io/instance"): name},
			Annotations:     map[string]string{own("example.com/note"): own("a note")},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: own("cnat.example.com/v1alpha1"), Kind: own("At"), Name: name}},
			Finalizers:      []string{own("example.com/cleanup")},
		}}
	}
	a, b := decoded("a"), decoded("b")
	want := []*corev1.Pod{a.DeepCopy(), b.DeepCopy()}
	for i, pod := range []*corev1.Pod{a, b} {
		out, err := TransformCompact()(pod)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out, want[i]) {
			t.Errorf("the transform changed what a reader sees:\n got %+v\nwant %+v", out, want[i])
		}
	}
	key := func(m map[string]string) string {
		for k := range m {
			return k
		}
		return ""
	}
	for _, tt := range []struct{ name, a, b string }{
		{"namespace", a.Namespace, b.Namespace},
		{"label key", key(a.Labels), key(b.Labels)},
		{"annotation key", key(a.Annotations), key(b.Annotations)},
		{"owner's apiVersion", a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		{"owner's kind", a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		{"finalizer", a.Finalizers[0], b.Finalizers[0]},
	} {
		if unsafe.StringData(tt.a) != unsafe.StringData(tt.b) {
			t.Errorf("the %s %q is two copies, want one shared", tt.name, tt.a)
		}
	}
	if unsafe.StringData(a.Annotations["example.com/note"]) == unsafe.StringData(b.Annotations["example.com/note"]) {
		t.Error("an annotation's value is shared: values are the object's own")
	}
}

func TestAFullStringTableLeavesNewStringsAsTheyAre(t *testing.T) {
	table := &stringTable{strings: map[string]string{}, max: 1}
	first := table.get(string([]byte("first")))
	if again := table.get(string([]byte("first"))); unsafe.StringData(again) != unsafe.StringData(first) {
		t.Error("a string the table holds is not its copy")
	}
	second := string([]byte("second"))
	if got := table.get(second); unsafe.StringData(got) != unsafe.StringData(second) || len(table.strings) != 1 {
		t.Errorf("a full table took %q: %d strings", got, len(table.strings))
	}
}

// A child the shell writes has the owner's label besides its selector's and template's
// (OwnedByLabel, which its pods must not get): the selector and the template share one
// map: two maps, where the template kept a third of its own before.
func TestTransformCompactSharesTheSelectorAndTemplateOfALabelledChild(t *testing.T) {
	pods := func() map[string]string { return map[string]string{"app": "web"} }
	own := pods()
	own[OwnedByLabel] = "memcached.cache.example.com"
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Labels: own},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: pods()},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pods()}},
		},
	}
	want := d.DeepCopy()
	out, err := TransformCompact()(d)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*appsv1.Deployment)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the transform changed what a reader sees:\n got %+v\nwant %+v", got, want)
	}
	if reflect.ValueOf(got.Spec.Template.Labels).Pointer() != reflect.ValueOf(got.Spec.Selector.MatchLabels).Pointer() {
		t.Error("the template's labels are a map of their own; want the selector's, which is equal")
	}
}
