package v1beta1_test

import (
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// TestCRD checks the generated CustomResourceDefinition against a real API server: the
// scale subresource that kubectl scale and a HorizontalPodAutoscaler use reads and writes
// spec.replicas, and spec.replicas keeps its bounds whichever way it is written.
func TestCRD(t *testing.T) {
	cp := reconciletest.StartAPIServer(t, "../../config/crd/bases")
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, cachev1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := cp.Client(t, scheme)

	for _, tc := range []struct {
		name    string
		create  int32  // spec.replicas on create
		scale   *int32 // spec.replicas then written to the scale subresource, if any
		want    int32  // spec.replicas afterwards
		refused string // what the API server's error says, if it refuses the create or the scale
	}{
		{name: "scale up", create: 1, scale: new(int32(2)), want: 2},
		{name: "scale down", create: 3, scale: new(int32(1)), want: 1},
		{name: "scale to the maximum", create: 1, scale: new(int32(3)), want: 3},
		{name: "scale above the maximum", create: 1, scale: new(int32(5)), want: 1,
			refused: "spec.replicas: Invalid value: 5: spec.replicas in body should be less than or equal to 3"},
		{name: "scale to zero", create: 2, scale: new(int32(0)), want: 2,
			refused: "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"},
		{name: "create above the maximum", create: 4,
			refused: "spec.replicas: Invalid value: 4: spec.replicas in body should be less than or equal to 3"},
		{name: "create with zero", create: 0,
			refused: "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			mc := &cachev1beta1.Memcached{
				ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(tc.name, " ", "-"), Namespace: "default"},
				Spec:       cachev1beta1.MemcachedSpec{Replicas: tc.create},
			}
			err := c.Create(ctx, mc)
			if tc.scale == nil {
				checkRefused(t, "creating", err, tc.refused)
				return
			}
			if err != nil {
				t.Fatalf("creating: %v", err)
			}

			scale := &autoscalingv1.Scale{}
			if err := c.SubResource("scale").Get(ctx, mc, scale); err != nil {
				t.Fatalf("reading the scale: %v", err)
			}
			if scale.Spec.Replicas != tc.create {
				t.Errorf("the scale's spec.replicas is %d, want spec.replicas %d", scale.Spec.Replicas, tc.create)
			}
			scale.Spec.Replicas = *tc.scale
			err = c.SubResource("scale").Update(ctx, mc, client.WithSubResourceBody(scale))
			if tc.refused != "" {
				checkRefused(t, "scaling", err, tc.refused)
			} else if err != nil {
				t.Fatalf("scaling: %v", err)
			}

			if err := c.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
				t.Fatal(err)
			}
			if mc.Spec.Replicas != tc.want {
				t.Errorf("spec.replicas is %d after scaling to %d, want %d", mc.Spec.Replicas, *tc.scale, tc.want)
			}
		})
	}

	t.Run("status read through the scale", func(t *testing.T) {
		ctx := t.Context()
		mc := &cachev1beta1.Memcached{
			ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: "default"},
			Spec:       cachev1beta1.MemcachedSpec{Replicas: 2},
		}
		if err := c.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
		mc.Status.Replicas, mc.Status.ReadyReplicas = 2, 1
		mc.Status.Selector = "app.kubernetes.io/name=memcached,app.kubernetes.io/instance=status"
		if err := c.Status().Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
		scale := &autoscalingv1.Scale{}
		if err := c.SubResource("scale").Get(ctx, mc, scale); err != nil {
			t.Fatal(err)
		}
		if scale.Status.Replicas != 2 || scale.Status.Selector != mc.Status.Selector {
			t.Errorf("the scale's status is %+v, want replicas 2 and selector %q", scale.Status, mc.Status.Selector)
		}
	})
	// No operator runs here: the status that clients read is the CRD's default.
	t.Run("a just-created Memcached reads as in progress", func(t *testing.T) {
		mc := &cachev1beta1.Memcached{
			ObjectMeta: metav1.ObjectMeta{Name: "just-created", Namespace: "default"},
			Spec:       cachev1beta1.MemcachedSpec{Replicas: 1},
		}
		if err := c.Create(t.Context(), mc); err != nil {
			t.Fatal(err)
		}
		if v := reconciletest.ReadVerdict(t, c, mc); v.Status != kstatus.InProgressStatus || v.Waited {
			t.Errorf("%s; want kstatus InProgress, and kubectl wait waiting", v)
		}
	})
}

// checkRefused fails the test unless err is the API server's refusal and says want.
func checkRefused(t *testing.T, doing string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("%s: %v", doing, err)
	case want != "" && err == nil:
		t.Fatalf("%s succeeded, want it refused with %q", doing, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s was refused with\n\t%v\nwant it to say %q", doing, err, want)
	default:
		t.Logf("%s: %v", doing, err)
	}
}
