package ownership

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestIntentOf(t *testing.T) {
	config := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}, Data: data}
	}
	base := config(map[string]string{"a": "1", "b": "2"})
	legacy, err := jsonHash(base)
	if err != nil {
		t.Fatal(err)
	}
	unchanged, err := intentOf(base, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		desired  client.Object
		live     string
		same     bool // the current intent is base's
		form     string
		previous string
	}{
		"the same content is the same intent, maps in any order": {
			desired: config(map[string]string{"b": "2", "a": "1"}), same: true, form: protoPrefix,
		},
		"a changed value is another intent":                {desired: config(map[string]string{"a": "1", "b": "3"}), form: protoPrefix},
		"a removed field is another intent":                {desired: config(map[string]string{"a": "1"}), form: protoPrefix},
		"a Kubernetes kind is hashed in its protobuf form": {desired: deployment(), form: protoPrefix},
		"a kind without protobuf is hashed in its JSON form": {
			desired: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "1"}}},
		},
		"a live intent in the JSON form earns the JSON hash too": {
			desired: config(map[string]string{"a": "1", "b": "2"}), live: legacy, same: true, form: protoPrefix, previous: legacy,
		},
		"a live intent in the protobuf form does not": {
			desired: config(map[string]string{"a": "1", "b": "2"}), live: unchanged.current, same: true, form: protoPrefix,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := intentOf(tt.desired, tt.live)
			if err != nil {
				t.Fatal(err)
			}
			if (got.current == unchanged.current) != tt.same {
				t.Errorf("intent %s, base's %s: same = %v, want %v", got.current, unchanged.current, !tt.same, tt.same)
			}
			if isProto := strings.HasPrefix(got.current, protoPrefix); isProto != (tt.form == protoPrefix) {
				t.Errorf("intent %s: protobuf form = %v, want %v", got.current, isProto, !isProto)
			}
			if got.previous != tt.previous {
				t.Errorf("previous form %q, want %q", got.previous, tt.previous)
			}
		})
	}
}

// The intent of a child recorded by an earlier release, in the JSON form, still counts:
// an upgrade of the library rewrites no child.
func TestAnIntentRecordedInTheEarlierFormIsRecorded(t *testing.T) {
	want := deployment()
	legacy, err := jsonHash(want)
	if err != nil {
		t.Fatal(err)
	}
	in, err := intentOf(want, legacy)
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		annotation string
		recorded   bool
	}{
		"the earlier form":               {legacy, true},
		"the current form":               {in.current, true},
		"another content's earlier form": {strings.Repeat("0", len(legacy)), false},
		"none":                           {"", false},
	} {
		t.Run(name, func(t *testing.T) {
			live := deployment(defaulted)
			live.Annotations = map[string]string{IntentAnnotation: tt.annotation}
			if got := in.recorded(live); got != tt.recorded {
				t.Errorf("recorded = %v, want %v", got, tt.recorded)
			}
		})
	}
}

// Ensure hashes every desired child on every reconcile: the protobuf form against the JSON
// form it replaced.
func BenchmarkIntent(b *testing.B) {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kv", Labels: map[string]string{"app": "kv"}}}
	sts.Spec.Template = deployment().Spec.Template
	for name, hash := range map[string]func(client.Object) (string, error){
		"protobuf": func(o client.Object) (string, error) { in, err := intentOf(o, ""); return in.current, err },
		"json":     jsonHash,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := hash(sts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
