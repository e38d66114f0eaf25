package reconciletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// Webhooks are the webhooks of an operator's manager, served to the control plane's API
// server as a cluster serves them (ControlPlane.ServeWebhooks).
type Webhooks struct {
	// Secret keeps the serving certificate and its authority (webhook.Certificates).
	Secret types.NamespacedName
	// Mutating and Validating name the webhook configurations; CRDs, the CRDs whose
	// conversion webhook is the manager's.
	Mutating, Validating string
	CRDs                 []string
	// URL is where the API server calls the manager's webhook server.
	URL string

	cp      *ControlPlane
	probed  [2]atomic.Bool // mutating, validating
	convert bool
}

// ServeWebhooks makes the manager spec describes serve its declared webhooks
// (reconcile.WithDefaulter, WithValidator, WithConversion) to the API server, as a
// cluster does: a MutatingWebhookConfiguration and a ValidatingWebhookConfiguration for
// the objects of namespace, each calling the manager's webhook server by URL on a local
// port, and the conversion webhook of each converted kind's CRD pointed at it. The server's
// certificate and authority are spec.Certificates' (a webhook.Certificates with defaults
// if nil), which puts the authority into the configurations and CRDs as in a cluster.
//
// Call it before StartManager(t, cfg, *spec), then Await. The configurations are removed
// and the CRDs' conversion set back to None when the test ends.
func (cp *ControlPlane) ServeWebhooks(t testing.TB, spec *reconcile.Manager, namespace string) *Webhooks {
	t.Helper()
	endpoints, err := spec.Webhooks()
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	if len(endpoints) == 0 {
		t.Fatalf("reconciletest: ServeWebhooks: the manager declares no webhook (reconcile.WithDefaulter, WithValidator, WithConversion)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reconciletest: finding a port for the webhook server: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close() // the webhook server listens on it again, at once
	base := "https://127.0.0.1:" + strconv.Itoa(port)

	w := &Webhooks{cp: cp, Mutating: "reconciletest-" + namespace, Validating: "reconciletest-" + namespace, URL: base}
	srv := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: "127.0.0.1", Port: port})
	for i, path := range []string{"/reconciletest-probe-mutate", "/reconciletest-probe-validate"} {
		srv.Register(path, &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
			w.probed[i].Store(true)
			return admission.Allowed("")
		})})
	}
	spec.Options.WebhookServer = srv
	certs := spec.Certificates
	if certs == nil {
		certs = &webhook.Certificates{}
		spec.Certificates = certs
	}
	if certs.Secret.Name == "" {
		certs.Secret = types.NamespacedName{Namespace: namespace, Name: "webhook-certificates"}
	}
	if len(certs.IPAddresses) == 0 && len(certs.DNSNames) == 0 {
		certs.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	w.Secret = certs.Secret

	ctx := t.Context()
	inNamespace := &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}}
	probeRule := admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
	}
	probeObjects := &metav1.LabelSelector{MatchLabels: map[string]string{probeLabel: "true"}}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: w.Mutating},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "probe.reconciletest.io", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + "/reconciletest-probe-mutate")},
			Rules: []admissionregistrationv1.RuleWithOperations{probeRule}, NamespaceSelector: inNamespace, ObjectSelector: probeObjects,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		}}}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: w.Validating},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "probe.reconciletest.io", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + "/reconciletest-probe-validate")},
			Rules: []admissionregistrationv1.RuleWithOperations{probeRule}, NamespaceSelector: inNamespace, ObjectSelector: probeObjects,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		}}}
	for _, e := range endpoints {
		mapping, err := cp.client.RESTMapper().RESTMapping(e.Kind.GroupKind(), e.Kind.Version)
		if err != nil {
			t.Fatalf("reconciletest: the API server does not serve the %s of the %s webhook: %v (install its CRD first)", e.Kind, e.Path, err)
		}
		rule := admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{e.Kind.Group}, APIVersions: []string{e.Kind.Version},
				Resources: []string{mapping.Resource.Resource}, Scope: ptr.To(admissionregistrationv1.ScopeType("*"))},
		}
		name := mapping.Resource.Resource + "." + e.Kind.Group
		switch e.Type {
		case webhook.Defaulting:
			mutating.Webhooks = append(mutating.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name: "default." + name, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + e.Path)},
				Rules: []admissionregistrationv1.RuleWithOperations{rule}, NamespaceSelector: inNamespace, FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			})
		case webhook.Validating:
			validating.Webhooks = append(validating.Webhooks, admissionregistrationv1.ValidatingWebhook{
				Name: "validate." + name, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + e.Path)},
				Rules: []admissionregistrationv1.RuleWithOperations{rule}, NamespaceSelector: inNamespace, FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			})
		case webhook.Converting:
			w.CRDs = append(w.CRDs, name)
			w.convert = true
			cp.convertThrough(t, name, base+e.Path)
		}
	}
	for _, obj := range []client.Object{mutating, validating} {
		if err := cp.client.Create(ctx, obj); err != nil {
			t.Fatalf("reconciletest: registering the webhooks: %v", err)
		}
		t.Cleanup(func() {
			if err := client.IgnoreNotFound(cp.client.Delete(context.Background(), obj)); err != nil {
				t.Errorf("reconciletest: removing the webhooks: %v", err)
			}
		})
	}
	certs.MutatingWebhookConfigurations = append(certs.MutatingWebhookConfigurations, w.Mutating)
	certs.ValidatingWebhookConfigurations = append(certs.ValidatingWebhookConfigurations, w.Validating)
	certs.CustomResourceDefinitions = append(certs.CustomResourceDefinitions, w.CRDs...)
	return w
}

// remove deletes the webhook configurations, so that another manager's may take their
// names.
func (w *Webhooks) remove(ctx context.Context) error {
	for _, obj := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: w.Mutating}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: w.Validating}},
	} {
		if err := client.IgnoreNotFound(w.cp.client.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("removing the webhooks of the previous manager: %w", err)
		}
	}
	return nil
}

// probeLabel marks the ConfigMaps whose dry-run creation tells that the API server calls
// a test's webhooks.
const probeLabel = "reconciletest.io/webhook-probe"

// convertThrough makes the conversion of CRD name a webhook at url, until the test ends.
func (cp *ControlPlane) convertThrough(t testing.TB, name, url string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	c := cp.apiextensions(t)
	if err := c.Get(t.Context(), types.NamespacedName{Name: name}, crd); err != nil {
		t.Fatalf("reconciletest: reading CRD %s: %v", name, err)
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: ptr.To(url)}, ConversionReviewVersions: []string{"v1"}}}
	if err := c.Update(t.Context(), crd); err != nil {
		t.Fatalf("reconciletest: setting CRD %s's conversion webhook: %v", name, err)
	}
	t.Cleanup(func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), types.NamespacedName{Name: name}, crd); err != nil {
			t.Errorf("reconciletest: reading CRD %s: %v", name, err)
			return
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		if err := c.Update(context.Background(), crd); err != nil {
			t.Errorf("reconciletest: setting CRD %s's conversion back to None: %v", name, err)
		}
	})
}

// apiextensions returns an administrator's client that knows CRDs.
func (cp *ControlPlane) apiextensions(t testing.TB) client.Client {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	return c
}

// Await returns once the API server calls the manager's webhooks with the authority of
// the Secret trusted: both configurations answer a probe, and every converted CRD trusts
// the authority. Call it once the manager runs (StartManager).
func (w *Webhooks) Await(t testing.TB) {
	t.Helper()
	c := w.cp.apiextensions(t)
	Eventually(t, func(ctx context.Context) error {
		w.probed[0].Store(false)
		w.probed[1].Store(false)
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Secret.Namespace, GenerateName: "webhook-probe-", Labels: map[string]string{probeLabel: "true"}}}
		if err := w.cp.client.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if !w.probed[0].Load() || !w.probed[1].Load() {
			return errors.New("the API server does not call the webhooks yet")
		}
		bundle, err := w.CABundle(ctx)
		if err != nil {
			return err
		}
		for _, name := range w.CRDs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
				return err
			}
			if got := crd.Spec.Conversion.Webhook.ClientConfig.CABundle; !bytes.Equal(got, bundle) {
				return fmt.Errorf("CRD %s does not trust the webhook's authority yet", name)
			}
		}
		return nil
	})
}

// CABundle returns the authorities the Secret keeps, which the API server is to trust.
func (w *Webhooks) CABundle(ctx context.Context) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := w.cp.client.Get(ctx, w.Secret, secret); err != nil {
		return nil, fmt.Errorf("the webhook's Secret: %w", err)
	}
	if len(secret.Data["ca.crt"]) == 0 {
		return nil, errors.New("the webhook's Secret has no authority yet")
	}
	return secret.Data["ca.crt"], nil
}
