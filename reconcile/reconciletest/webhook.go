package reconciletest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Webhook is a mutating admission webhook served by the test's own process and called by
// the control plane's API server, as a policy engine or a sidecar injector would be.
type Webhook struct {
	admitted atomic.Int64
	mutated  atomic.Int64
	probed   atomic.Bool
}

// Admitted returns how many objects the webhook was asked to admit.
func (w *Webhook) Admitted() int { return int(w.admitted.Load()) }

// Mutated returns how many of them mutate changed.
func (w *Webhook) Mutated() int { return int(w.mutated.Load()) }

// MutatingWebhook serves a mutating admission webhook over HTTPS on a local port, with a
// certificate authority made for it alone, and registers it with the API server for the
// objects of resource created or updated in namespace: the API server passes each of them
// to mutate (as JSON decoded into maps) and stores what mutate leaves. It returns once the
// API server calls the webhook, and takes it away when the test ends.
//
// mutate runs on the webhook server's goroutines; it must not call t.Fatal.
func (cp *ControlPlane) MutatingWebhook(t testing.TB, namespace string, resource schema.GroupVersionResource, mutate func(obj map[string]any)) *Webhook {
	t.Helper()
	caPEM, cert, err := selfSigned()
	if err != nil {
		t.Fatalf("reconciletest: making the webhook's certificates: %v", err)
	}
	w := &Webhook{}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(rw http.ResponseWriter, r *http.Request) {
		w.admitted.Add(1)
		if review(rw, r, mutate) {
			w.mutated.Add(1)
		}
	})
	mux.HandleFunc("/probe", func(rw http.ResponseWriter, r *http.Request) {
		w.probed.Store(true)
		_ = review(rw, r, func(map[string]any) {})
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reconciletest: listening for the webhook: %v", err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = srv.Close() }) // after the configuration is gone (cleanups run last first)

	url := "https://" + l.Addr().String()
	inNamespace := &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}}
	hook := func(name, path string, rule admissionregistrationv1.Rule, objects *metav1.LabelSelector) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{
			Name:         name,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url + path), CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       rule,
			}},
			NamespaceSelector:       inNamespace,
			ObjectSelector:          objects,
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}
	}
	namespaced := ptr.To(admissionregistrationv1.NamespacedScope)
	config := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "reconciletest-" + namespace},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			hook("mutate.reconciletest.io", "/mutate", admissionregistrationv1.Rule{
				APIGroups: []string{resource.Group}, APIVersions: []string{resource.Version}, Resources: []string{resource.Resource}, Scope: namespaced,
			}, nil),
			// A dry-run create of a labelled ConfigMap tells when the API server has
			// loaded the configuration: its webhooks are loaded together.
			hook("probe.reconciletest.io", "/probe", admissionregistrationv1.Rule{
				APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}, Scope: namespaced,
			}, &metav1.LabelSelector{MatchLabels: map[string]string{probeLabel: "true"}}),
		},
	}
	if err := cp.client.Create(t.Context(), config); err != nil {
		t.Fatalf("reconciletest: registering the webhook: %v", err)
	}
	t.Cleanup(func() {
		if err := client.IgnoreNotFound(cp.client.Delete(context.Background(), config)); err != nil {
			t.Errorf("reconciletest: removing the webhook: %v", err)
		}
	})
	Eventually(t, func(ctx context.Context) error {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "webhook-probe-", Labels: map[string]string{probeLabel: "true"}}}
		if err := cp.client.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if !w.probed.Load() {
			return errors.New("the API server does not call the webhook yet")
		}
		return nil
	})
	return w
}

// review answers the AdmissionReview of r with the JSON patch that mutate makes of its
// object, and reports whether mutate changed it.
func review(rw http.ResponseWriter, r *http.Request, mutate func(obj map[string]any)) (mutated bool) {
	var ar admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&ar); err != nil || ar.Request == nil {
		http.Error(rw, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return false
	}
	resp := &admissionv1.AdmissionResponse{UID: ar.Request.UID, Allowed: true}
	var obj map[string]any
	if err := json.Unmarshal(ar.Request.Object.Raw, &obj); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return false
	}
	before := clone(obj)
	mutate(obj)
	if ops := diff("", before, obj, nil); len(ops) > 0 {
		patch, err := json.Marshal(ops)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return false
		}
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	}
	ar.Response, ar.Request = resp, nil
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&ar)
	return resp.Patch != nil
}

// diff appends to ops the JSON patch operations that turn before into after: objects
// are compared key by key, anything else replaced whole.
func diff(path string, before, after map[string]any, ops []map[string]any) []map[string]any {
	for k, b := range before {
		p := path + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
		a, ok := after[k]
		switch {
		case !ok:
			ops = append(ops, map[string]any{"op": "remove", "path": p})
		case reflect.DeepEqual(a, b):
		default:
			bm, bok := b.(map[string]any)
			am, aok := a.(map[string]any)
			if bok && aok {
				ops = diff(p, bm, am, ops)
			} else {
				ops = append(ops, map[string]any{"op": "replace", "path": p, "value": a})
			}
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			ops = append(ops, map[string]any{"op": "add", "path": path + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k), "value": a})
		}
	}
	return ops
}

func clone(obj map[string]any) map[string]any {
	raw, _ := json.Marshal(obj)
	var c map[string]any
	_ = json.Unmarshal(raw, &c)
	return c
}

// selfSigned makes a certificate authority and a serving certificate it signs for
// 127.0.0.1, valid for a day, and returns the authority's certificate in PEM.
func selfSigned() ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "reconciletest webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
