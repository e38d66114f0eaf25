package reconcile

import (
	"testing"
)

// Tracing names the fields a write sets, two levels deep, sorted, without the optimistic
// lock's resourceVersion.
func TestTracingNamesTheFieldsAWriteSets(t *testing.T) {
	for _, tc := range []struct {
		patch, want string
	}{
		{`{"metadata":{"resourceVersion":"7","labels":{"a":"b"}},"status":{"phase":"Ready","conditions":[]}}`, "metadata.labels,status.conditions,status.phase"},
		{`{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"v"}}`, "data.k"},
		{`{"spec":null}`, "spec"},
		{`not json`, ""},
	} {
		if got := changed([]byte(tc.patch)).Value.AsString(); got != tc.want {
			t.Errorf("changed(%s) = %q; want %q", tc.patch, got, tc.want)
		}
	}
}
