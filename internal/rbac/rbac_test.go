package rbac

import "testing"

// A marker lists each verb once, in kubebuilder's order, and names the core group "".
func TestMarkerListsEachVerbOnceInOrder(t *testing.T) {
	for _, tt := range []struct {
		name            string
		group, resource string
		verbs           []string
		want            string
	}{
		{"the verbs of an Ensure, in any order", "apps", "statefulsets", []string{"patch", "create", "watch", "list", "get"},
			"// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch"},
		{"the core group", "", "configmaps", []string{"watch", "list", "list"},
			`// +kubebuilder:rbac:groups="",resources=configmaps,verbs=list;watch`},
		{"a subresource, and a verb of no list last", "cache.example.com", "memcacheds/finalizers", []string{"escalate", "update"},
			"// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update;escalate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Marker(tt.group, tt.resource, tt.verbs); got != tt.want {
				t.Errorf("Marker = %s\nwant     %s", got, tt.want)
			}
		})
	}
}
