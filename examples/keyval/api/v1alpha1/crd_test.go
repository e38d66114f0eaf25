package v1alpha1_test

import (
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// TestCRD checks the generated CustomResourceDefinition against a real API server: what
// it defaults, what it refuses, and the scale subresource that kubectl scale and a
// HorizontalPodAutoscaler use.
func TestCRD(t *testing.T) {
	cp := reconciletest.StartAPIServer(t, "../../config/crd/bases")
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, storev1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := cp.Client(t, scheme)
	keyval := func(name string, spec storev1alpha1.KeyvalSpec) *storev1alpha1.Keyval {
		return &storev1alpha1.Keyval{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}
	}

	t.Run("storage defaults to 1Gi, kept when the Keyval goes", func(t *testing.T) {
		kv := keyval("defaults", storev1alpha1.KeyvalSpec{Replicas: 1})
		if err := c.Create(t.Context(), kv); err != nil {
			t.Fatal(err)
		}
		if s := kv.Spec.Storage; s.Size == nil || s.Size.String() != "1Gi" || s.WhenDeleted != storev1alpha1.Retain {
			t.Errorf("spec.storage is %+v; want size 1Gi, whenDeleted Retain", s)
		}
	})

	for _, tc := range []struct {
		name    string
		spec    storev1alpha1.KeyvalSpec
		refused string // what the API server's error says
	}{
		{"no replicas", storev1alpha1.KeyvalSpec{Replicas: 0},
			"spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"},
		{"more replicas than 5", storev1alpha1.KeyvalSpec{Replicas: 6},
			"spec.replicas: Invalid value: 6: spec.replicas in body should be less than or equal to 5"},
		{"a port of its own", storev1alpha1.KeyvalSpec{Replicas: 1, Config: map[string]string{"port": "7000"}},
			"port and dir are set by the operator"},
		{"a directory of its own", storev1alpha1.KeyvalSpec{Replicas: 1, Config: map[string]string{"dir": "/tmp"}},
			"port and dir are set by the operator"},
		{"another way to keep volumes", storev1alpha1.KeyvalSpec{Replicas: 1, Storage: storev1alpha1.KeyvalStorage{WhenDeleted: "Archive"}},
			`spec.storage.whenDeleted: Unsupported value: "Archive"`},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			err := c.Create(t.Context(), keyval(strings.ReplaceAll(tc.name, " ", "-"), tc.spec))
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("creating: %v; want it refused with %q", err, tc.refused)
			}
			t.Logf("the API server says: %v", err)
		})
	}

	t.Run("the scale subresource is spec.replicas and the status", func(t *testing.T) {
		kv := keyval("scale", storev1alpha1.KeyvalSpec{Replicas: 1})
		if err := c.Create(t.Context(), kv); err != nil {
			t.Fatal(err)
		}
		kv.Status.Replicas, kv.Status.Selector = 1, "app.kubernetes.io/instance=scale"
		if err := c.Status().Update(t.Context(), kv); err != nil {
			t.Fatal(err)
		}
		scale := &autoscalingv1.Scale{}
		if err := c.SubResource("scale").Get(t.Context(), kv, scale); err != nil {
			t.Fatal(err)
		}
		if scale.Spec.Replicas != 1 || scale.Status.Replicas != 1 || scale.Status.Selector != kv.Status.Selector {
			t.Errorf("the scale is %+v; want spec.replicas 1 and the status", scale)
		}
		scale.Spec.Replicas = 3
		if err := c.SubResource("scale").Update(t.Context(), kv, client.WithSubResourceBody(scale)); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(kv), kv); err != nil || kv.Spec.Replicas != 3 {
			t.Errorf("scaled to 3: spec.replicas %d (%v)", kv.Spec.Replicas, err)
		}
	})

	// No operator runs here: the status that clients read is the CRD's default.
	t.Run("a just-created Keyval reads as in progress", func(t *testing.T) {
		kv := keyval("just-created", storev1alpha1.KeyvalSpec{Replicas: 1})
		if err := c.Create(t.Context(), kv); err != nil {
			t.Fatal(err)
		}
		if v := reconciletest.ReadVerdict(t, c, kv); v.Status != kstatus.InProgressStatus || v.Waited {
			t.Errorf("%s; want kstatus InProgress, and kubectl wait waiting", v)
		}
	})
}
