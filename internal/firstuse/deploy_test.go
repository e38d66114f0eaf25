package firstuse_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// What make deploy applies is what a real API server accepts: every object that make
// manifests prints for an example, applied server-side with strict field validation, is
// accepted without a warning (a deprecated API, a pod template that breaks the namespace's
// restricted Pod Security level), the manager runs the image asked for, and the samples are
// valid custom resources of the CRD just installed.
func TestDeployedManifestsAreAcceptedByTheAPIServer(t *testing.T) {
	root := checkout(t)
	cp := reconciletest.StartAPIServer(t)
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandlerWithContext = warnings
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	for _, ex := range examples(t, root) {
		t.Run(ex.name, func(t *testing.T) {
			image := "registry.example/" + ex.name + "-operator:v0.1.0"
			// make runs in an environment of its own, not as a child of the make that may
			// be running these tests.
			env := []string{"MAKEFLAGS=", "MAKELEVEL=", "MFLAGS="}
			var hooked []*unstructured.Unstructured // what calls the manager's webhooks
			// config/sharded is config/default with the shards' rights and replicas.
			for _, config := range []string{"default", "sharded"} {
				objects := decode(t, run(t, root, env, "make", "--no-print-directory", "-s", "manifests",
					"EXAMPLE="+ex.name, "CONFIG="+config, "IMG="+image))

				var images []string
				for _, obj := range objects {
					apply(t, c, obj, warnings)
					if obj.GetKind() == "Deployment" {
						containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
						for _, container := range containers {
							spec, _ := container.(map[string]any)
							images = append(images, fmt.Sprint(spec["image"]))
						}
					}
					if obj.GetKind() == "CustomResourceDefinition" {
						awaitEstablished(t, c, obj.GetName())
					}
					if strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "conversion", "strategy"); strategy == "Webhook" ||
						obj.GetKind() == "MutatingWebhookConfiguration" || obj.GetKind() == "ValidatingWebhookConfiguration" {
						hooked = append(hooked, obj)
					}
				}
				if len(images) != 1 || images[0] != image {
					t.Errorf("config/%s: the manager runs %v, want [%s]", config, images, image)
				}
			}

			// No manager runs here to serve the webhooks that the manifests name (their
			// Service has no endpoint): without them, the samples meet the CRDs' schemas alone.
			unhook(t, c, hooked)
			ns := cp.Namespace(t)
			samples := decode(t, tool(t, root, root, "kustomize", "build", "examples/"+ex.name+"/config/samples"))
			if len(samples) == 0 {
				t.Error("config/samples holds no sample")
			}
			for _, sample := range samples {
				sample.SetNamespace(ns)
				if len(hooked) > 0 {
					// The API server stops calling the webhooks moments after they go.
					reconciletest.Eventually(t, func(ctx context.Context) error {
						body, err := sample.MarshalJSON()
						if err != nil {
							return err
						}
						return c.Patch(ctx, sample.DeepCopy(), client.RawPatch(types.ApplyPatchType, body),
							client.FieldOwner("firstuse"), client.ForceOwnership, client.DryRunAll)
					})
					warnings.take()
				}
				apply(t, c, sample, warnings)
			}
		})
	}
}

// unhook removes the webhook configurations among objects, and sets the CRDs among them
// that convert through a webhook to convert without one.
func unhook(t *testing.T, c client.Client, objects []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objects {
		var err error
		if obj.GetKind() == "CustomResourceDefinition" {
			patch := []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`)
			err = c.Patch(t.Context(), obj.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
		} else {
			err = client.IgnoreNotFound(c.Delete(t.Context(), obj.DeepCopy()))
		}
		if err != nil {
			t.Fatalf("removing the webhooks of %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// decode returns the objects of a stream of YAML documents.
func decode(t *testing.T, manifests string) []*unstructured.Unstructured {
	t.Helper()
	var objects []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := d.Decode(&obj.Object)
		switch {
		case err == io.EOF:
			return objects
		case err != nil:
			t.Fatalf("decoding the manifests: %v\n%s", err, manifests)
		case obj.Object != nil:
			objects = append(objects, obj)
		}
	}
}

// apply applies obj server-side, as kubectl apply --server-side does, but with unknown and
// duplicate fields refused rather than dropped, and fails the test on an error or a warning.
func apply(t *testing.T, c client.Client, obj *unstructured.Unstructured, warnings *warningRecorder) {
	t.Helper()
	body, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	name := obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
	err = c.Patch(t.Context(), obj, client.RawPatch(types.ApplyPatchType, body),
		client.FieldOwner("firstuse"), client.ForceOwnership, client.FieldValidation("Strict"))
	if err != nil {
		t.Errorf("applying %s: %v", name, err)
	}
	for _, w := range warnings.take() {
		t.Errorf("applying %s: warning: %s", name, w)
	}
}

// awaitEstablished waits until the API server serves the custom resources of a CRD.
func awaitEstablished(t *testing.T, c client.Client, name string) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("CRD %s is not established", name)
	})
}

// warningRecorder keeps the warnings the API server sends with its answers.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

// take returns the warnings received since it was last called.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	taken := w.warnings
	w.warnings = nil
	return taken
}
