package webhook_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// FuzzRoundTripLosesNothing converts Gadgets both ways through the spoke and back: the
// hub comes back whole, paused included, which the spoke has no field for; the spoke comes
// back whole but for the annotation that carries the hub.
func FuzzRoundTripLosesNothing(f *testing.F) {
	f.Add(int32(3), "fast", true, "Running", "example.com/owner", "team-a")
	f.Add(int32(0), "", false, "", "", "")
	f.Fuzz(func(t *testing.T, replicas int32, mode string, paused bool, phase, key, value string) {
		if key == webhook.KeptAnnotation {
			t.Skip("the annotation of the library's own")
		}
		meta := metav1.ObjectMeta{Name: "g", Namespace: "ns", Generation: 2}
		if key != "" {
			meta.Annotations = map[string]string{key: value}
		}
		hub := &v1beta1.Gadget{ObjectMeta: meta, Spec: v1beta1.GadgetSpec{Replicas: replicas, Mode: mode, Paused: paused},
			Status: v1beta1.GadgetStatus{Phase: phase}}
		spoke, back := &v1alpha1.Gadget{}, &v1beta1.Gadget{}
		if err := gadget.FromHub(context.Background(), hub.DeepCopyObject().(*v1beta1.Gadget), spoke); err != nil {
			t.Fatal(err)
		}
		if err := gadget.ToHub(context.Background(), spoke, back); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(hub, back) {
			t.Errorf("hub -> v1alpha1 -> hub:\n got %+v\nwant %+v", back, hub)
		}

		spoke = &v1alpha1.Gadget{ObjectMeta: meta, Spec: v1alpha1.GadgetSpec{Size: replicas, Mode: mode}, Status: v1alpha1.GadgetStatus{Phase: phase}}
		again := &v1alpha1.Gadget{}
		hub = &v1beta1.Gadget{}
		if err := gadget.ToHub(context.Background(), spoke.DeepCopyObject().(*v1alpha1.Gadget), hub); err != nil {
			t.Fatal(err)
		}
		if err := gadget.FromHub(context.Background(), hub, again); err != nil {
			t.Fatal(err)
		}
		delete(again.Annotations, webhook.KeptAnnotation)
		if !equality.Semantic.DeepEqual(spoke, again) {
			t.Errorf("v1alpha1 -> hub -> v1alpha1:\n got %+v\nwant %+v", again, spoke)
		}
	})
}

func TestRestore(t *testing.T) {
	kept := func(paused bool) *v1alpha1.Gadget {
		s := &v1alpha1.Gadget{}
		if err := webhook.Keep(&v1beta1.Gadget{Spec: v1beta1.GadgetSpec{Paused: paused, Replicas: 7}}, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name       string
		spoke      *v1alpha1.Gadget
		wantPaused bool
	}{
		{name: "a spoke created in its own version leaves the hub's extra fields unset", spoke: &v1alpha1.Gadget{Spec: v1alpha1.GadgetSpec{Size: 2}}},
		{name: "a spoke converted from the hub gives back what it had no room for", spoke: kept(true), wantPaused: true},
		{name: "a field the spoke has wins over the kept one", spoke: func() *v1alpha1.Gadget { s := kept(false); s.Spec.Size = 2; return s }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			annotations := tt.spoke.Annotations
			hub := &v1beta1.Gadget{}
			if err := gadget.ToHub(context.Background(), tt.spoke, hub); err != nil {
				t.Fatal(err)
			}
			if hub.Spec.Paused != tt.wantPaused || hub.Spec.Replicas != tt.spoke.Spec.Size {
				t.Errorf("hub spec %+v, want paused %v and replicas %d", hub.Spec, tt.wantPaused, tt.spoke.Spec.Size)
			}
			if _, ok := hub.Annotations[webhook.KeptAnnotation]; ok {
				t.Errorf("the hub carries %s", webhook.KeptAnnotation)
			}
			if len(annotations) != len(tt.spoke.Annotations) {
				t.Errorf("the spoke's annotations changed: the hub's are not a copy")
			}
		})
	}
}
