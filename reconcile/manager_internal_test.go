package reconcile

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A declared restriction and one the program's options already hold (a shard's label)
// both apply: the cache holds what matches the two.
func TestTheCacheRestrictionsOfDeclarationAndOptionsBothHold(t *testing.T) {
	declared := labels.SelectorFromSet(labels.Set{"managed-by": "at-operator"})
	shard := labels.SelectorFromSet(labels.Set{"shard": "a"})
	for _, tc := range []struct {
		name    string
		options map[client.Object]cache.ByObject
		want    string
	}{
		{"declared alone", nil, "managed-by=at-operator"},
		{"declared and a shard's", map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: shard}}, "managed-by=at-operator,shard=a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Manager{
				Options:     ctrl.Options{Cache: cache.Options{ByObject: tc.options}},
				Controllers: []Declaration{For(&corev1.ConfigMap{}, LogicFunc[*corev1.ConfigMap](nil), TestFieldOwner, WithCache(&corev1.Pod{}, cache.ByObject{Label: declared}))},
			}
			byObject, err := m.cacheByObject(nil)
			if err != nil {
				t.Fatal(err)
			}
			_, by, ok := findByObject(byObject, &corev1.Pod{})
			if !ok || by.Label.String() != tc.want {
				t.Errorf("pods cached by %v, want %s", by.Label, tc.want)
			}
		})
	}
}
