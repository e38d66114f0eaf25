package v1alpha1_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	starterv1alpha1 "github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// TestCRD checks the generated CustomResourceDefinition against a real API server: what
// it refuses, and the status a just-created object starts with.
func TestCRD(t *testing.T) {
	cp := reconciletest.StartAPIServer(t, "../../config/crd/bases")
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, starterv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := cp.Client(t, scheme)
	widget := func(name string, replicas int32) *starterv1alpha1.Widget {
		return &starterv1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: starterv1alpha1.WidgetSpec{Replicas: replicas}}
	}

	for _, tc := range []struct {
		name     string
		replicas int32
		refused  string // what the API server's error says
	}{
		{"no replicas", 0, "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"},
		{"more replicas than 5", 6, "spec.replicas: Invalid value: 6: spec.replicas in body should be less than or equal to 5"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			err := c.Create(t.Context(), widget(strings.ReplaceAll(tc.name, " ", "-"), tc.replicas))
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("creating: %v; want it refused with %q", err, tc.refused)
			}
		})
	}

	// No operator runs here: the status that clients read is the CRD's default.
	t.Run("a just-created Widget reads as in progress", func(t *testing.T) {
		w := widget("just-created", 1)
		if err := c.Create(t.Context(), w); err != nil {
			t.Fatal(err)
		}
		if v := reconciletest.ReadVerdict(t, c, w); v.Status != kstatus.InProgressStatus || v.Waited {
			t.Errorf("%s; want kstatus InProgress, and kubectl wait waiting", v)
		}
	})
}
