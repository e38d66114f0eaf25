package rehearsal_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/rehearsal"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// writeYAML writes objs to a file of dir, as the manifests a project ships.
func writeYAML(t *testing.T, dir, name string, objs ...any) string {
	t.Helper()
	var data []byte
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, "---\n"...), b...)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// An operator that serves a conversion and a defaulting webhook, with a certificate it
// makes itself, is rehearsed with its manifests as a cluster has them: the webhooks by
// service. The rehearsal points them at the build's port, and the build's certificate
// code puts its authority in them: the Gadgets, created in v1alpha1 and stored in v1beta1,
// are converted and defaulted by the build, which keeps a ConfigMap for each. Restarted,
// and replaced by itself, it writes nothing.
func TestARehearsalServesTheBuildsWebhooksAtItsPort(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "gadget")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./testdata/gadget").CombinedOutput(); err != nil {
		t.Fatalf("building the Gadget operator: %v\n%s", err, out)
	}
	service := func(path string) *apiextensionsv1.ServiceReference {
		return &apiextensionsv1.ServiceReference{Namespace: "gadget-system", Name: "gadget-webhook-service", Path: ptr.To(path)}
	}
	crd := gadget.CRD()
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: service("/convert")},
			ConversionReviewVersions: []string{"v1"},
		},
	}
	hub := v1beta1.GroupVersion.WithKind("Gadget")
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "gadget-mutating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mgadget-v1beta1.webhooks.reconcilekit.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "gadget-system", Name: "gadget-webhook-service", Path: ptr.To(webhook.Path(webhook.Defaulting, hub)),
			}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{hub.Group}, APIVersions: []string{hub.Version}, Resources: []string{"gadgets"}},
			}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		}},
	}
	objects := writeYAML(t, dir, "objects.yaml",
		map[string]any{"apiVersion": "webhooks.reconcilekit.io/v1alpha1", "kind": "Gadget",
			"metadata": map[string]any{"namespace": "lab", "name": "old"}, "spec": map[string]any{"size": 2, "mode": "fast"}},
		map[string]any{"apiVersion": "webhooks.reconcilekit.io/v1beta1", "kind": "Gadget",
			"metadata": map[string]any{"namespace": "lab", "name": "plain"}, "spec": map[string]any{"replicas": 1}},
	)
	build := rehearsal.Build{
		Command:  []string{bin, "-webhook-port=" + rehearsal.WebhookPortPlaceholder, "-health-probe-bind-address=" + rehearsal.ProbePlaceholder},
		CRDs:     []string{writeYAML(t, dir, "crd.yaml", crd)},
		Webhooks: []string{writeYAML(t, dir, "webhooks.yaml", mutating)},
	}
	objs, err := rehearsal.ReadObjects(objects)
	if err != nil {
		t.Fatal(err)
	}
	cp := reconciletest.StartCluster(t, 1)
	r := rehearsal.Rehearsal{Objects: objs, Old: build, New: build, ControlPlane: cp.ControlPlane}
	if testing.Verbose() {
		r.Output = os.Stderr
	}
	rep, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := "the old build, restarted, writes nothing\nthe new build writes nothing\n"
	if got := rep.String(); got != want {
		t.Errorf("the report says\n%s\nwant\n%s", got, want)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := gadget.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := cp.Client(t, scheme)
	for name, want := range map[string]string{"old": "fast", "plain": "standard"} {
		g := &v1beta1.Gadget{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "lab", Name: name}, g); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "lab", Name: "gadget-" + name}, cm); err != nil {
			t.Errorf("the operator kept no ConfigMap for Gadget %s: %v", name, err)
		}
		if g.Spec.Mode != want || cm.Data["mode"] != want {
			t.Errorf("Gadget %s has mode %q, its ConfigMap %q; want %q", name, g.Spec.Mode, cm.Data["mode"], want)
		}
	}
}

// The objects of a live cluster are read as a rehearsal takes them, and only read.
func TestReadClusterReadsTheCustomObjectsWithoutWhatTheServerSet(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	crd := gadget.CRD()
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, gadget.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := cp.Client(t, scheme)
	if err := c.Create(t.Context(), crd.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	ns := cp.Namespace(t)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		return c.Create(ctx, &v1beta1.Gadget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"tier": "front"}},
			Spec:       v1beta1.GadgetSpec{Replicas: 2, Mode: "fast"},
		})
	})
	live := &v1beta1.Gadget{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, live); err != nil {
		t.Fatal(err)
	}
	live.Status.Phase = "Running"
	if err := c.Status().Update(t.Context(), live); err != nil {
		t.Fatal(err)
	}

	var reads reconciletest.Counter
	objs, err := rehearsal.ReadCluster(t.Context(), reads.Wrap(cp.Config), writeYAML(t, t.TempDir(), "crd.yaml", crd))
	if err != nil {
		t.Fatal(err)
	}
	if reads.Writes() > 0 {
		t.Errorf("ReadCluster wrote:\n%s", reads.String())
	}
	if len(objs) != 1 {
		t.Fatalf("read %d objects, want the one Gadget", len(objs))
	}
	want := map[string]any{
		"apiVersion": "webhooks.reconcilekit.io/v1beta1", "kind": "Gadget",
		"metadata": map[string]any{"namespace": ns, "name": "web", "labels": map[string]any{"tier": "front"}},
		"spec":     map[string]any{"replicas": int64(2), "mode": "fast"},
	}
	if diff := cmp.Diff(want, objs[0].Object); diff != "" {
		t.Errorf("the Gadget read (-want +got):\n%s", diff)
	}
}
