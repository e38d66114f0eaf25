package reconciletest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// gadgetController declares the Gadget's controller with its three webhooks: mode
// defaulted to "standard"; replicas at most 5, mode "legacy" warned of; v1alpha1
// converted to and from the hub, v1beta1.
func gadgetController() *reconcile.Controller[*v1beta1.Gadget] {
	return reconcile.For(&v1beta1.Gadget{},
		reconcile.LogicFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "gadget-operator",
	).
		WithDefaulter(webhook.DefaulterFunc[*v1beta1.Gadget](func(_ context.Context, g *v1beta1.Gadget) error {
			if g.Spec.Mode == "" {
				g.Spec.Mode = "standard"
			}
			return nil
		})).
		WithValidator(webhook.ValidatorFunc[*v1beta1.Gadget](func(_ context.Context, g, _ *v1beta1.Gadget) ([]string, error) {
			var warn []string
			if g.Spec.Mode == "legacy" {
				warn = append(warn, "spec.mode legacy is deprecated: use standard")
			}
			if g.Spec.Replicas > 5 {
				return warn, field.Invalid(field.NewPath("spec", "replicas"), g.Spec.Replicas, "at most 5")
			}
			return warn, nil
		})).
		WithConversion(gadget.Spoke())
}

// startGadgets starts an API server with the Gadget's CRD, and a manager serving the
// Gadget's webhooks to it with certs; it returns a client that records warnings.
func startGadgets(t *testing.T, certs *webhook.Certificates) (*reconciletest.ControlPlane, client.Client, *reconciletest.Warnings, *reconciletest.Webhooks, string) {
	t.Helper()
	cp, scheme := gadgetAPIServer(t)
	ns := cp.Namespace(t)
	hooks := serveGadgets(t, cp, scheme, ns, certs, cp.Config)
	w := &reconciletest.Warnings{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cp, c, w, hooks, ns
}

// gadgetAPIServer starts an API server with the Gadget's CRD established, v1beta1 stored.
func gadgetAPIServer(t *testing.T) (*reconciletest.ControlPlane, *runtime.Scheme) {
	t.Helper()
	return gadgetAPIServerStoring(t, "v1beta1")
}

// gadgetAPIServerStoring starts an API server with the Gadget's CRD established, storing
// the version named.
func gadgetAPIServerStoring(t *testing.T, storage string) (*reconciletest.ControlPlane, *runtime.Scheme) {
	t.Helper()
	fasttier.Skip(t)
	cp, err := reconciletest.Start(t.Context(), reconciletest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, gadget.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	admin := cp.Client(t, scheme)
	crd := gadget.CRD()
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == storage
	}
	if err := admin.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("the Gadget CRD is not established yet")
	})
	return cp, scheme
}

// serveGadgets runs the Gadget's manager from cfg, serving its webhooks for namespace ns
// with certs, and returns once the API server calls them.
func serveGadgets(t *testing.T, cp *reconciletest.ControlPlane, scheme *runtime.Scheme, ns string, certs *webhook.Certificates, cfg *rest.Config) *reconciletest.Webhooks {
	t.Helper()
	spec := reconcile.Manager{Options: ctrl.Options{Scheme: scheme}, Controllers: []reconcile.Declaration{gadgetController()}, Certificates: certs}
	hooks := cp.ServeWebhooks(t, &spec, ns)
	reconciletest.StartManager(t, cfg, spec)
	hooks.Await(t)
	return hooks
}

func TestWebhooksServedToTheAPIServer(t *testing.T) {
	_, c, warned, _, ns := startGadgets(t, nil)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

	t.Run("admission", func(t *testing.T) {
		tests := []struct {
			name        string
			obj         client.Object
			wantErr     string // in the error; "" for none
			wantWarning string
			wantMode    string
		}{
			{name: "a create the validator rejects names the field", obj: &v1beta1.Gadget{ObjectMeta: meta("too-many"), Spec: v1beta1.GadgetSpec{Replicas: 9}},
				wantErr: `spec.replicas: Invalid value: 9: at most 5`},
			{name: "a rejected create still returns its warnings", obj: &v1beta1.Gadget{ObjectMeta: meta("too-many-legacy"), Spec: v1beta1.GadgetSpec{Replicas: 9, Mode: "legacy"}},
				wantErr: "spec.replicas", wantWarning: "spec.mode legacy is deprecated: use standard"},
			{name: "a field left empty is defaulted", obj: &v1beta1.Gadget{ObjectMeta: meta("defaulted"), Spec: v1beta1.GadgetSpec{Replicas: 1}},
				wantMode: "standard"},
			{name: "a value given is not defaulted, and its warning reaches the client", obj: &v1beta1.Gadget{ObjectMeta: meta("legacy"), Spec: v1beta1.GadgetSpec{Replicas: 1, Mode: "legacy"}},
				wantMode: "legacy", wantWarning: "spec.mode legacy is deprecated: use standard"},
			{name: "a create in the spoke's version is defaulted and validated as the hub", obj: &v1alpha1.Gadget{ObjectMeta: meta("spoke-too-many"), Spec: v1alpha1.GadgetSpec{Size: 6}},
				wantErr: "spec.replicas"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				warned.Take()
				err := c.Create(t.Context(), tt.obj)
				switch {
				case tt.wantErr == "" && err != nil:
					t.Fatalf("create: %v", err)
				case tt.wantErr != "" && (err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.wantErr)):
					t.Fatalf("create: %v; want 422 Invalid naming %q", err, tt.wantErr)
				}
				if got := strings.Join(warned.Take(), "; "); got != tt.wantWarning {
					t.Errorf("warnings %q, want %q", got, tt.wantWarning)
				}
				if tt.wantMode != "" {
					got := &v1beta1.Gadget{}
					if err := c.Get(t.Context(), client.ObjectKeyFromObject(tt.obj), got); err != nil {
						t.Fatal(err)
					}
					if got.Spec.Mode != tt.wantMode {
						t.Errorf("spec.mode %q, want %q", got.Spec.Mode, tt.wantMode)
					}
				}
			})
		}
	})

	t.Run("conversion", func(t *testing.T) {
		stored := &v1beta1.Gadget{ObjectMeta: meta("stored"), Spec: v1beta1.GadgetSpec{Replicas: 2, Paused: true}}
		if err := c.Create(t.Context(), stored); err != nil {
			t.Fatal(err)
		}
		old := &v1alpha1.Gadget{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), old); err != nil {
			t.Fatalf("a v1alpha1 read of a v1beta1-stored object: %v", err)
		}
		if old.Spec.Size != 2 || old.Spec.Mode != "standard" {
			t.Errorf("read as v1alpha1: spec %+v, want size 2 (v1beta1's replicas) and mode standard", old.Spec)
		}
		old.Spec.Size = 3
		if err := c.Update(t.Context(), old); err != nil {
			t.Fatalf("a v1alpha1 update: %v", err)
		}
		hub := &v1beta1.Gadget{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(stored), hub); err != nil {
			t.Fatal(err)
		}
		if hub.Spec.Replicas != 3 || !hub.Spec.Paused {
			t.Errorf("after a v1alpha1 update, v1beta1 spec %+v: want replicas 3 and paused kept, which v1alpha1 has no field for", hub.Spec)
		}
		if _, ok := hub.Annotations[webhook.KeptAnnotation]; ok {
			t.Errorf("the hub stores annotation %s", webhook.KeptAnnotation)
		}
		created := &v1alpha1.Gadget{ObjectMeta: meta("created-old"), Spec: v1alpha1.GadgetSpec{Size: 4}}
		if err := c.Create(t.Context(), created); err != nil {
			t.Fatalf("a v1alpha1 create: %v", err)
		}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(created), hub); err != nil {
			t.Fatal(err)
		}
		if hub.Spec.Replicas != 4 || hub.Spec.Paused {
			t.Errorf("a v1alpha1 create read as v1beta1: spec %+v, want replicas 4, not paused", hub.Spec)
		}
		list := &v1alpha1.GadgetList{}
		if err := c.List(t.Context(), list, client.InNamespace(ns)); err != nil {
			t.Fatalf("a v1alpha1 list: %v", err)
		}
		if len(list.Items) != 4 {
			t.Errorf("a v1alpha1 list has %d Gadgets, want 4", len(list.Items))
		}
	})
}

// An informer made before the manager starts (for an index, or by a readiness probe
// answered first) is one the manager waits for before it starts its other runnables; for
// Gadgets stored as v1alpha1 it fills only through the operator's own conversion webhook.
// So the certificate is made before the caches fill, or the manager waits for ever.
func TestWebhookCertificateIsMadeBeforeTheCachesFill(t *testing.T) {
	cp, scheme := gadgetAPIServerStoring(t, "v1alpha1")
	ns := cp.Namespace(t)
	admin := cp.Client(t, scheme)
	if failed, err := gadget.WriteOld(t.Context(), admin, ns, 3, 1); err != nil {
		t.Fatalf("%d Gadgets not written, the first: %v", failed, err)
	}
	spec := reconcile.Manager{Options: ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}},
		Controllers: []reconcile.Declaration{gadgetController()}}
	hooks := cp.ServeWebhooks(t, &spec, ns)
	mgr, err := spec.New(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	informer, err := mgr.GetCache().GetInformer(t.Context(), &v1beta1.Gadget{}, cache.BlockUntilSynced(false))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("the manager failed: %v", err)
			}
		case <-time.After(time.Minute): // controller-runtime#3440: never, while a cache cannot fill
			t.Error("the manager did not stop within a minute: its cache of Gadgets never filled")
		}
	})
	hooks.Await(t)
	reconciletest.Eventually(t, func(context.Context) error {
		if !informer.HasSynced() {
			return errors.New("the cache of Gadgets has not filled")
		}
		return nil
	})
}

func TestWebhookCertificateRotatesWhileRequestsFlow(t *testing.T) {
	certs := &webhook.Certificates{Validity: 21 * time.Second, Refresh: 250 * time.Millisecond} // rotated 14 s after it is made, served 3 s later
	cp, c, _, hooks, ns := startGadgets(t, certs)
	admin := cp.Client(t, c.Scheme())
	stored := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stored"}, Spec: v1beta1.GadgetSpec{Replicas: 1}}
	if err := c.Create(t.Context(), stored); err != nil {
		t.Fatal(err)
	}
	firstBundle, err := hooks.CABundle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	firstServed := served(t, hooks.URL)

	// Requests flow through every webhook while the certificate rotates: a dry-run create
	// is defaulted and validated, a v1alpha1 read of the v1beta1-stored Gadget converted.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var requests int
	var failures []error
	for _, request := range []func(ctx context.Context) error{
		func(ctx context.Context) error {
			g := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "flow-"}, Spec: v1beta1.GadgetSpec{Replicas: 1}}
			if err := c.Create(ctx, g, client.DryRunAll); err != nil {
				return err
			}
			if g.Spec.Mode != "standard" {
				return fmt.Errorf("not defaulted: spec %+v", g.Spec)
			}
			return nil
		},
		func(ctx context.Context) error {
			return c.Get(ctx, client.ObjectKeyFromObject(stored), &v1alpha1.Gadget{})
		},
	} {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := request(t.Context())
				mu.Lock()
				requests++
				if err != nil {
					failures = append(failures, err)
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}

	// The rotation: a new authority joins the bundle, then the certificate it signs is
	// served, and the bundle of every configuration and CRD is the Secret's, the old
	// authority still in it.
	timeout := time.After(time.Minute)
	for {
		bundle, err := hooks.CABundle(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		now := served(t, hooks.URL)
		if !bytes.Equal(bundle, firstBundle) && !now.Equal(firstServed) && now.CheckSignatureFrom(firstAuthority(t, bundle)) == nil &&
			injected(t, admin, hooks, bundle) {
			if !bytes.HasSuffix(bundle, firstBundle) {
				t.Errorf("the old authority left the bundle with the rotation that replaced it")
			}
			break
		}
		select {
		case <-timeout:
			t.Fatalf("the certificate did not rotate within a minute (validity %v)", certs.Validity)
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(2 * time.Second) // and requests go on with the new one
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed across the rotation, the first: %v", len(failures), requests, failures[0])
	}
	t.Logf("%d requests through the webhooks across the rotation", requests)
}

// served returns the certificate the webhook server at url serves.
func served(t *testing.T, url string) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only to read the certificate
	if err != nil {
		t.Fatalf("connecting to the webhook server: %v", err)
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0]
}

// firstAuthority returns the newest authority of bundle.
func firstAuthority(t *testing.T, bundle []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(bundle)
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// injected reports whether every webhook of hooks' configurations and CRDs trusts bundle.
func injected(t *testing.T, c client.Client, hooks *reconciletest.Webhooks, bundle []byte) bool {
	t.Helper()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: hooks.Mutating}, m); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Name: hooks.Validating}, v); err != nil {
		t.Fatal(err)
	}
	var bundles [][]byte
	for _, w := range m.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for _, w := range v.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for _, name := range hooks.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, crd.Spec.Conversion.Webhook.ClientConfig.CABundle)
	}
	for _, b := range bundles {
		if !bytes.Equal(b, bundle) {
			return false
		}
	}
	return true
}

// The operator's role names the one Secret, the two webhook configurations and the CRD it
// writes the certificate and the caBundle into (the resourceNames of the markers in
// docs/webhooks.md), with the Secret shipped empty so that it needs no create: that is
// all the certificates need.
func TestWebhookCertificatesNeedOnlyTheirOwnObjects(t *testing.T) {
	cp, scheme := gadgetAPIServer(t)
	admin := cp.Client(t, scheme)
	ns := cp.Namespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gadget-webhook-certificates"}}
	if err := admin.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gadget-operator-" + ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "update"}, ResourceNames: []string{secret.Name}},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
			Verbs: []string{"get", "update"}, ResourceNames: []string{"reconciletest-" + ns}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "update"},
			ResourceNames: []string{gadget.CRD().Name}},
		// the controller's own
		{APIGroups: []string{v1beta1.GroupVersion.Group}, Resources: []string{"gadgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{v1beta1.GroupVersion.Group}, Resources: []string{"gadgets/status"}, Verbs: []string{"update", "patch"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}}
	if err := admin.Create(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), role) })
	certs := &webhook.Certificates{Secret: client.ObjectKeyFromObject(secret)}
	hooks := serveGadgets(t, cp, scheme, ns, certs, cp.ConfigFor(t, "gadget-operator", role.Name))

	bundle, err := hooks.CABundle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !injected(t, admin, hooks, bundle) {
		t.Error("the caBundles are not the Secret's authorities")
	}
	g := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}, Spec: v1beta1.GadgetSpec{Replicas: 9}}
	if err := admin.Create(t.Context(), g); !apierrors.IsInvalid(err) {
		t.Errorf("a create the validator rejects: %v, want 422 Invalid", err)
	}
}
