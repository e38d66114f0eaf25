package webhook

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Certificates makes the webhook server's certificate and the authority that signs it,
// keeps both in a Secret that the operator's replicas share, rotates them before they
// expire, and puts the authority into the caBundle of the operator's webhook
// configurations and of its CRDs' conversion webhooks. The server reads the certificate
// through GetCertificate at every handshake, so a rotated one is served at once, without a
// restart.
//
// A rotation never leaves the API server with a certificate it cannot verify: a new
// authority is first added to the caBundle beside the old one, and only some time later
// (twice Refresh, at least 3 s, for every replica and the API server to see it) does the
// server's certificate change to one the new authority signs; the old authority leaves
// the caBundle at the next rotation.
//
// Run it in the manager: reconcile.Manager does it when Manager.Certificates is set;
// otherwise SetupWithManager, and the webhook server's TLSOpts set GetCertificate. What
// it may read and write is named: the Secret, and the configurations and CRDs listed,
// which RBAC can restrict by resourceNames (docs/webhooks.md has the markers).
type Certificates struct {
	// Secret keeps the authority and the certificate. Required. Created if it does not
	// exist; shipping it empty with the operator's manifests spares the operator the right
	// to create Secrets.
	Secret types.NamespacedName

	// DNSNames and IPAddresses are what the certificate is for: in a cluster the webhook
	// Service's name, <service>.<namespace>.svc; a test's local server 127.0.0.1. At least
	// one is required.
	DNSNames    []string
	IPAddresses []net.IP

	// The MutatingWebhookConfigurations, ValidatingWebhookConfigurations and
	// CustomResourceDefinitions, by name, whose webhooks' caBundle is the authority: every
	// webhook of the configurations, and the conversion webhook of the CRDs.
	MutatingWebhookConfigurations   []string
	ValidatingWebhookConfigurations []string
	CustomResourceDefinitions       []string

	// Validity is how long a certificate is valid, 90 days if zero; it is rotated when a
	// third of it remains. An authority is valid twice as long.
	Validity time.Duration

	// Refresh is how often the Secret is read, rotated if due and the caBundles checked:
	// a minute if zero.
	Refresh time.Duration

	client  client.Client
	serving atomic.Pointer[tls.Certificate]
}

// The defaults of Certificates.
const (
	DefaultValidity = 90 * 24 * time.Hour
	DefaultRefresh  = time.Minute
)

// The keys of the Secret Certificates keeps.
const (
	secretCA      = "ca.crt" // every authority trusted, the newest first
	secretCAKey   = "ca.key" // the newest authority's key
	secretCert    = corev1.TLSCertKey
	secretKey     = corev1.TLSPrivateKeyKey
	caAddedAt     = "reconcilekit.io/authority-added-at"
	minPropagated = 3 * time.Second
)

// SetupWithManager makes c run in mgr, reading and writing through a client of its own
// (uncached: it reads one Secret and a few named objects). It refuses a Certificates that
// cannot work, naming the fix.
func (c *Certificates) SetupWithManager(mgr manager.Manager) error {
	if err := c.check(); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, admissionregistrationv1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	cl, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("webhook: the certificates' client: %w", err)
	}
	c.client = cl
	return mgr.Add(withWebhooks{c})
}

// withWebhooks runs Certificates among the manager's webhook servers, which start before
// its caches fill, rather than among the runnables that start after: a cache of a kind
// the operator's own conversion webhook converts (an informer made before the manager
// starts, for an index or by a readiness probe) fills only once that webhook serves a
// certificate, and the manager would wait for it for ever. controller-runtime groups
// runnables by their type; a webhook server is the one type it starts that early.
type withWebhooks struct{ *Certificates }

var _ ctrlwebhook.Server = withWebhooks{} // or the manager would start it after its caches

func (withWebhooks) Register(string, http.Handler)   {}
func (withWebhooks) StartedChecker() healthz.Checker { return healthz.Ping }
func (withWebhooks) WebhookMux() *http.ServeMux      { return http.NewServeMux() }

func (c *Certificates) check() error {
	var errs []error
	if c.Secret.Name == "" || c.Secret.Namespace == "" {
		errs = append(errs, errors.New("webhook: Certificates.Secret names no Secret: give the namespace and name of the Secret that keeps them"))
	}
	if len(c.DNSNames) == 0 && len(c.IPAddresses) == 0 {
		errs = append(errs, errors.New("webhook: Certificates name no DNSNames or IPAddresses: give the webhook Service's <service>.<namespace>.svc"))
	}
	if c.validity() < 6*c.refresh() {
		errs = append(errs, fmt.Errorf("webhook: Certificates.Validity %v is less than six Refresh periods (%v): a rotation would not complete in time; make Refresh shorter", c.validity(), c.refresh()))
	}
	return errors.Join(errs...)
}

func (c *Certificates) validity() time.Duration {
	if c.Validity == 0 {
		return DefaultValidity
	}
	return c.Validity
}

func (c *Certificates) refresh() time.Duration {
	if c.Refresh == 0 {
		return DefaultRefresh
	}
	return c.Refresh
}

// GetCertificate returns the certificate to serve: the newest read from the Secret. Give
// it to the webhook server's tls.Config.
func (c *Certificates) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cert := c.serving.Load()
	if cert == nil {
		return nil, errors.New("webhook: no serving certificate yet")
	}
	return cert, nil
}

// NeedLeaderElection returns false: every replica serves webhooks.
func (c *Certificates) NeedLeaderElection() bool { return false }

// Start keeps the certificate and the caBundles right until ctx ends, every Refresh;
// what fails is logged and tried again at the next, or sooner while no certificate is
// served yet (after 1 s, 2 s, 4 s ... up to Refresh).
func (c *Certificates) Start(ctx context.Context) error {
	if c.client == nil {
		return errors.New("webhook: Certificates started without SetupWithManager")
	}
	log := ctrl.Log.WithName("webhook-certificates")
	retry := time.Second // until a certificate is served, doubled up to Refresh
	for {
		if err := c.sync(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "keeping the webhook certificate", "secret", c.Secret)
		}
		wait := c.refresh()
		if c.serving.Load() == nil {
			// Nothing is served yet: the webhooks fail every request until a sync
			// succeeds, so the next comes sooner than Refresh.
			wait, retry = min(retry, wait), 2*retry
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// sync reads the Secret, rotates what is due, writes it back, puts the authorities
// into the caBundles and serves the certificate.
func (c *Certificates) sync(ctx context.Context) error {
	secret := &corev1.Secret{}
	err := c.client.Get(ctx, c.Secret, secret)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return fmt.Errorf("reading Secret %s: %w", c.Secret, err)
	}
	st := readState(secret)
	changed, err := c.advance(&st, time.Now())
	if err != nil {
		return err
	}
	if changed {
		st.write(secret)
		if missing {
			secret.Namespace, secret.Name = c.Secret.Namespace, c.Secret.Name
			err = c.client.Create(ctx, secret)
		} else {
			err = c.client.Update(ctx, secret) // a replica that wrote first wins; the next sync reads it
		}
		if err != nil {
			return fmt.Errorf("writing Secret %s: %w", c.Secret, err)
		}
		ctrl.Log.WithName("webhook-certificates").Info("wrote the webhook certificate", "secret", c.Secret, "authorities", len(st.authorities), "notAfter", st.cert.NotAfter)
	}
	if err := c.inject(ctx, st.bundle()); err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(st.certPEM, st.keyPEM)
	if err != nil {
		return fmt.Errorf("the certificate of Secret %s: %w", c.Secret, err)
	}
	if old := c.serving.Load(); old == nil || !bytes.Equal(old.Certificate[0], cert.Certificate[0]) {
		c.serving.Store(&cert)
	}
	return nil
}

// state is what the Secret keeps.
type state struct {
	authorities []*x509.Certificate // the newest first
	caKey       crypto.Signer       // the newest's
	caAdded     time.Time
	cert        *x509.Certificate
	certPEM     []byte
	keyPEM      []byte
}

func readState(s *corev1.Secret) state {
	var st state
	rest := s.Data[secretCA]
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if ca, err := x509.ParseCertificate(block.Bytes); err == nil {
			st.authorities = append(st.authorities, ca)
		}
	}
	if block, _ := pem.Decode(s.Data[secretCAKey]); block != nil {
		if key, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
			st.caKey, _ = key.(crypto.Signer)
		}
	}
	st.caAdded, _ = time.Parse(time.RFC3339Nano, s.Annotations[caAddedAt])
	if _, err := tls.X509KeyPair(s.Data[secretCert], s.Data[secretKey]); err == nil {
		block, _ := pem.Decode(s.Data[secretCert])
		st.cert, _ = x509.ParseCertificate(block.Bytes)
		st.certPEM, st.keyPEM = s.Data[secretCert], s.Data[secretKey]
	}
	return st
}

func (st *state) write(s *corev1.Secret) {
	s.Type = corev1.SecretTypeOpaque
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[caAddedAt] = st.caAdded.UTC().Format(time.RFC3339Nano)
	der, _ := x509.MarshalPKCS8PrivateKey(st.caKey)
	s.Data = map[string][]byte{
		secretCA:    st.bundle(),
		secretCAKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		secretCert:  st.certPEM,
		secretKey:   st.keyPEM,
	}
}

// bundle is the authorities in PEM, the caBundle.
func (st *state) bundle() []byte {
	var b []byte
	for _, ca := range st.authorities {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	}
	return b
}

// advance rotates what is due at now, and reports whether anything changed: a new
// authority when there is no usable one or when the certificate it signed is due; a new
// certificate when there is none, it has expired, it names other hosts, no trusted
// authority signed it, or a newer authority has been trusted long enough.
func (c *Certificates) advance(st *state, now time.Time) (bool, error) {
	changed := false
	var trusted []*x509.Certificate
	for _, ca := range st.authorities {
		if now.Before(ca.NotAfter) {
			trusted = append(trusted, ca)
		}
	}
	newest := len(trusted) > 0 && len(st.authorities) > 0 && trusted[0] == st.authorities[0] && st.caKey != nil && sameKey(trusted[0], st.caKey)
	signedByNewest := newest && st.cert != nil && st.cert.CheckSignatureFrom(trusted[0]) == nil
	due := st.cert == nil || st.cert.NotAfter.Sub(now) < c.validity()/3
	if !newest || (signedByNewest && due) {
		ca, key, err := newAuthority(now, 2*c.validity())
		if err != nil {
			return false, err
		}
		st.authorities = append([]*x509.Certificate{ca}, trusted[:min(1, len(trusted))]...)
		st.caKey, st.caAdded, changed = key, now, true
		signedByNewest = false
	}
	signedByTrusted := st.cert != nil && slices.ContainsFunc(st.authorities, func(ca *x509.Certificate) bool { return st.cert.CheckSignatureFrom(ca) == nil })
	reissue := st.cert == nil || !now.Before(st.cert.NotAfter) || !signedByTrusted || !c.names(st.cert) ||
		(!signedByNewest && now.Sub(st.caAdded) >= max(2*c.refresh(), minPropagated))
	if reissue {
		if err := c.issue(st, now); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

// names reports whether cert is for c's names.
func (c *Certificates) names(cert *x509.Certificate) bool {
	return slices.Equal(cert.DNSNames, c.DNSNames) && slices.EqualFunc(cert.IPAddresses, c.IPAddresses, net.IP.Equal)
}

func sameKey(ca *x509.Certificate, key crypto.Signer) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(ca.PublicKey)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func newAuthority(now time.Time, validity time.Duration) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: "webhook authority " + now.UTC().Format(time.RFC3339)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("webhook: making an authority: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

// issue makes a certificate for c's names, signed by the newest authority.
func (c *Certificates) issue(st *state, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	name := "webhook"
	if len(c.DNSNames) > 0 {
		name = c.DNSNames[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(c.validity()),
		DNSNames: c.DNSNames, IPAddresses: c.IPAddresses,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, st.authorities[0], key.Public(), st.caKey)
	if err != nil {
		return fmt.Errorf("webhook: making the certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	st.cert, _ = x509.ParseCertificate(der)
	st.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	st.keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return nil
}

// inject makes bundle the caBundle of every webhook of the named configurations and
// of the named CRDs' conversion webhooks, writing only those that differ.
func (c *Certificates) inject(ctx context.Context, bundle []byte) error {
	var errs []error
	for _, name := range c.MutatingWebhookConfigurations {
		errs = append(errs, c.update(ctx, name, &admissionregistrationv1.MutatingWebhookConfiguration{}, func(o client.Object) bool {
			changed := false
			for i := range o.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks {
				cfg := &o.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[i].ClientConfig
				changed = setBundle(&cfg.CABundle, bundle) || changed
			}
			return changed
		}))
	}
	for _, name := range c.ValidatingWebhookConfigurations {
		errs = append(errs, c.update(ctx, name, &admissionregistrationv1.ValidatingWebhookConfiguration{}, func(o client.Object) bool {
			changed := false
			for i := range o.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks {
				cfg := &o.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[i].ClientConfig
				changed = setBundle(&cfg.CABundle, bundle) || changed
			}
			return changed
		}))
	}
	for _, name := range c.CustomResourceDefinitions {
		errs = append(errs, c.update(ctx, name, &apiextensionsv1.CustomResourceDefinition{}, func(o client.Object) bool {
			conv := o.(*apiextensionsv1.CustomResourceDefinition).Spec.Conversion
			if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
				return false // no conversion webhook: nothing to trust
			}
			return setBundle(&conv.Webhook.ClientConfig.CABundle, bundle)
		}))
	}
	return errors.Join(errs...)
}

func (c *Certificates) update(ctx context.Context, name string, obj client.Object, set func(client.Object) bool) error {
	if err := c.client.Get(ctx, types.NamespacedName{Name: name}, obj); err != nil {
		return fmt.Errorf("reading %T %s for its caBundle: %w", obj, name, err)
	}
	if !set(obj) {
		return nil
	}
	if err := c.client.Update(ctx, obj); err != nil {
		return fmt.Errorf("writing the caBundle of %T %s: %w", obj, name, err)
	}
	return nil
}

func setBundle(field *[]byte, bundle []byte) bool {
	if bytes.Equal(*field, bundle) {
		return false
	}
	*field = bytes.Clone(bundle)
	return true
}
