package rehearsal

import (
	"context"
	"fmt"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A cluster reaches an operator's webhooks through a Service; the local cluster reaches
// the build's webhook server on the loopback interface, by URL. So the rehearsal rewrites
// every service reference of the build's webhook configurations and of its CRDs'
// conversion into a URL of that port, keeping the path, and keeps the caBundle the build
// put in them (webhook.Certificates does): a configuration replaced without it would fail
// every call until the build's next refresh.

// webhookURL is the URL of the service reference's path on the local port.
func webhookURL(port int, path string) string {
	return "https://127.0.0.1:" + strconv.Itoa(port) + path
}

// localConversion points the CRD's conversion webhook, if it has one by service, at port.
func localConversion(crd *apiextensionsv1.CustomResourceDefinition, port int) {
	conv := crd.Spec.Conversion
	if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || conv.Webhook.ClientConfig.Service == nil {
		return
	}
	path := "/convert"
	if p := conv.Webhook.ClientConfig.Service.Path; p != nil {
		path = *p
	}
	url := webhookURL(port, path)
	conv.Webhook.ClientConfig.Service, conv.Webhook.ClientConfig.URL = nil, &url
}

// keepConversionCA copies the live CRD's conversion caBundle into crd's, if crd has none.
func keepConversionCA(crd, live *apiextensionsv1.CustomResourceDefinition) {
	c, l := crd.Spec.Conversion, live.Spec.Conversion
	if c == nil || c.Webhook == nil || c.Webhook.ClientConfig == nil || len(c.Webhook.ClientConfig.CABundle) > 0 ||
		l == nil || l.Webhook == nil || l.Webhook.ClientConfig == nil {
		return
	}
	c.Webhook.ClientConfig.CABundle = l.Webhook.ClientConfig.CABundle
}

// isWebhookConfiguration reports whether obj is an admission webhook configuration.
func isWebhookConfiguration(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "admissionregistration.k8s.io" &&
		(gvk.Kind == "MutatingWebhookConfiguration" || gvk.Kind == "ValidatingWebhookConfiguration")
}

// applyWebhooks creates the webhook configurations of objs, or replaces those that exist,
// every service reference made a URL of port, every caBundle the live one had kept.
func applyWebhooks(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, port int) error {
	for _, obj := range objs {
		if !isWebhookConfiguration(obj) {
			return fmt.Errorf("%s is not a webhook configuration", describeObject(obj))
		}
		obj = strip(obj)
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for i, h := range hooks {
			hook, ok := h.(map[string]any)
			if !ok {
				continue
			}
			path, hasService, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			if _, ok, _ := unstructured.NestedMap(hook, "clientConfig", "service"); ok {
				hasService = true
			}
			if hasService {
				unstructured.RemoveNestedField(hook, "clientConfig", "service")
				_ = unstructured.SetNestedField(hook, webhookURL(port, path), "clientConfig", "url") // a map of maps takes a string
			}
			hooks[i] = hook
		}
		if hooks != nil {
			_ = unstructured.SetNestedSlice(obj.Object, hooks, "webhooks") // hooks came from it
		}
		err := c.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(obj.GroupVersionKind())
			if err = c.Get(ctx, client.ObjectKeyFromObject(obj), live); err == nil {
				keepWebhookCAs(obj, live)
				obj.SetResourceVersion(live.GetResourceVersion())
				err = c.Update(ctx, obj)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", describeObject(obj), err)
		}
	}
	return nil
}

// keepWebhookCAs copies each webhook's caBundle from the live configuration's webhook of
// the same name, where obj's has none.
func keepWebhookCAs(obj, live *unstructured.Unstructured) {
	cas := map[string]any{}
	liveHooks, _, _ := unstructured.NestedSlice(live.Object, "webhooks")
	for _, h := range liveHooks {
		if hook, ok := h.(map[string]any); ok {
			if ca, ok, _ := unstructured.NestedString(hook, "clientConfig", "caBundle"); ok {
				name, _, _ := unstructured.NestedString(hook, "name")
				cas[name] = ca
			}
		}
	}
	hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
	for i, h := range hooks {
		hook, ok := h.(map[string]any)
		if !ok {
			continue
		}
		name, _, _ := unstructured.NestedString(hook, "name")
		if _, has, _ := unstructured.NestedString(hook, "clientConfig", "caBundle"); !has && cas[name] != nil {
			_ = unstructured.SetNestedField(hook, cas[name], "clientConfig", "caBundle")
			hooks[i] = hook
		}
	}
	if hooks != nil {
		_ = unstructured.SetNestedSlice(obj.Object, hooks, "webhooks")
	}
}
