package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	cachev1alpha1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// namespace is where config/default puts the operator.
const namespace = "memcached-system"

// TestManifestsServeTheWebhooksThroughTheirService renders config/default and
// config/sharded as kubectl would apply them, and checks what a cluster needs to reach the
// manager's webhooks, which the tests of the real API server reach by URL instead: every
// webhook the manager serves (reconcile.Manager.Webhooks) is named, at its path, by a
// configuration or the CRD's conversion that calls the webhook Service of the manager's
// namespace; the Service reaches the manager's webhook port; the manager is told its
// namespace; and the certificates main makes name exactly the objects the manifests hold,
// which the role lets it read and write by resourceNames alone.
func TestManifestsServeTheWebhooksThroughTheirService(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, cachev1alpha1.AddToScheme, cachev1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	served, err := reconcile.Manager{Options: ctrl.Options{Scheme: scheme},
		Controllers: []reconcile.Declaration{controller.WithWebhooks(controller.New(), nil)}}.Webhooks()
	if err != nil {
		t.Fatal(err)
	}
	paths := map[webhook.Type][]string{}
	for _, e := range served {
		paths[e.Type] = append(paths[e.Type], e.Path)
	}
	certs := certificates(namespace, "") // in a cluster the server binds to :9443, no address of its own
	wantService := admissionregistrationv1.ServiceReference{Namespace: namespace, Name: webhookService}

	for _, config := range []string{"default", "sharded"} {
		t.Run(config, func(t *testing.T) {
			objects := render(t, filepath.Join("..", "config", config))
			find := func(kind, ns, name string, into any) bool {
				t.Helper()
				for _, obj := range objects {
					if obj.GetKind() == kind && obj.GetNamespace() == ns && obj.GetName() == name {
						if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
							t.Fatal(err)
						}
						return true
					}
				}
				t.Errorf("no %s %s/%s among the manifests", kind, ns, name)
				return false
			}
			called := func(what string, ref *admissionregistrationv1.ServiceReference, path string) {
				t.Helper()
				if ref == nil || ref.Namespace != wantService.Namespace || ref.Name != wantService.Name || ref.Path == nil || *ref.Path != path {
					t.Errorf("%s calls %+v, want Service %s/%s at %s", what, ref, namespace, webhookService, path)
				}
			}

			mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if find("MutatingWebhookConfiguration", "", certs.MutatingWebhookConfigurations[0], mutating) {
				if len(mutating.Webhooks) != len(paths[webhook.Defaulting]) {
					t.Errorf("%d mutating webhooks, want %d", len(mutating.Webhooks), len(paths[webhook.Defaulting]))
				}
				for i, w := range mutating.Webhooks {
					if i < len(paths[webhook.Defaulting]) {
						called("mutating webhook "+w.Name, w.ClientConfig.Service, paths[webhook.Defaulting][i])
					}
				}
			}
			validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if find("ValidatingWebhookConfiguration", "", certs.ValidatingWebhookConfigurations[0], validating) {
				if len(validating.Webhooks) != len(paths[webhook.Validating]) {
					t.Errorf("%d validating webhooks, want %d", len(validating.Webhooks), len(paths[webhook.Validating]))
				}
				for i, w := range validating.Webhooks {
					if i < len(paths[webhook.Validating]) {
						called("validating webhook "+w.Name, w.ClientConfig.Service, paths[webhook.Validating][i])
					}
				}
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if find("CustomResourceDefinition", "", certs.CustomResourceDefinitions[0], crd) {
				c := crd.Spec.Conversion
				if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil || c.Webhook.ClientConfig.Service == nil {
					t.Fatalf("the CRD's conversion is %+v, want a webhook", c)
				}
				s := c.Webhook.ClientConfig.Service
				called("the CRD's conversion", &admissionregistrationv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: s.Path}, paths[webhook.Converting][0])
				if !slices.Equal(c.Webhook.ConversionReviewVersions, []string{"v1"}) {
					t.Errorf("the CRD's conversion reviews %v, want [v1]", c.Webhook.ConversionReviewVersions)
				}
			}

			// The Service reaches the manager's webhook server, on controller-runtime's port.
			service, manager := &corev1.Service{}, &appsv1.Deployment{}
			if find("Service", namespace, webhookService, service) && find("Deployment", namespace, "memcached-controller-manager", manager) {
				pod := manager.Spec.Template
				if len(service.Spec.Ports) != 1 || !selects(service.Spec.Selector, pod.Labels) {
					t.Errorf("the webhook Service %+v does not select the manager's pods, labelled %v", service.Spec, pod.Labels)
				}
				c := pod.Spec.Containers[0]
				target := service.Spec.Ports[0].TargetPort.String()
				if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == target && p.ContainerPort == 9443 }) {
					t.Errorf("the webhook Service targets port %q; the manager's ports are %+v, want it named for 9443", target, c.Ports)
				}
				if !slices.Contains(c.Args, "--webhook-namespace=$(POD_NAMESPACE)") ||
					!slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
						return e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
					}) {
					t.Errorf("the manager runs %v with %+v: want --webhook-namespace its own", c.Args, c.Env)
				}
			}
			if certs.DNSNames[0] != webhookService+"."+namespace+".svc" {
				t.Errorf("the certificate is for %v, want the Service %s.%s.svc", certs.DNSNames, webhookService, namespace)
			}
			find("Secret", certs.Secret.Namespace, certs.Secret.Name, &corev1.Secret{})

			// The role: the objects the certificates write, by resourceNames alone.
			var rules []rbacv1.PolicyRule
			for _, obj := range objects {
				if obj.GetKind() == "ClusterRole" && obj.GetName() == "memcached-manager-role" || obj.GetKind() == "Role" && obj.GetName() == "memcached-manager-role" {
					role := &rbacv1.ClusterRole{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, role); err != nil {
						t.Fatal(err)
					}
					if obj.GetKind() == "Role" && obj.GetNamespace() != namespace {
						t.Errorf("Role %s is in namespace %s, want %s", obj.GetName(), obj.GetNamespace(), namespace)
					}
					rules = append(rules, role.Rules...)
				}
			}
			for _, want := range []struct {
				group, resource string
				names           []string
			}{
				{"", "secrets", []string{certs.Secret.Name}},
				{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", certs.MutatingWebhookConfigurations},
				{"admissionregistration.k8s.io", "validatingwebhookconfigurations", certs.ValidatingWebhookConfigurations},
				{"apiextensions.k8s.io", "customresourcedefinitions", certs.CustomResourceDefinitions},
				{"apiextensions.k8s.io", "customresourcedefinitions/status", certs.CustomResourceDefinitions},
			} {
				var granted []string
				for _, r := range rules {
					if !slices.Contains(r.APIGroups, want.group) || !slices.Contains(r.Resources, want.resource) {
						continue
					}
					if len(r.ResourceNames) == 0 {
						t.Errorf("the role grants %v on every %s: want it limited by resourceNames", r.Verbs, want.resource)
					}
					granted = append(granted, r.ResourceNames...)
				}
				if slices.Sort(granted); !slices.Equal(granted, slices.Sorted(slices.Values(want.names))) {
					t.Errorf("the role grants %s named %v, want %v", want.resource, granted, want.names)
				}
			}
		})
	}
}

// selects reports whether selector selects an object labelled labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

// render returns the objects kustomize builds from dir, with the project's own kustomize:
// the one hack/tools/go.mod pins, in the closest directory up that has it.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	tools := filepath.Join("hack", "tools", "go.mod")
	for up := ".."; ; up = filepath.Join(up, "..") {
		if _, err := os.Stat(filepath.Join(up, tools)); err == nil {
			tools = filepath.Join(up, tools)
			break
		} else if abs, _ := filepath.Abs(up); abs == filepath.Dir(abs) {
			t.Fatalf("no %s in any directory up from here", tools)
		}
	}
	cmd := exec.CommandContext(t.Context(), "go", "tool", "-modfile="+tools, "kustomize", "build", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	var objects []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(out)), 4096)
	for {
		obj := &unstructured.Unstructured{}
		switch err := d.Decode(&obj.Object); {
		case err == io.EOF:
			return objects
		case err != nil:
			t.Fatalf("decoding what kustomize built: %v", err)
		case obj.Object != nil:
			objects = append(objects, obj)
		}
	}
}
