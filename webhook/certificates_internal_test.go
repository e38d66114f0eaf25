package webhook

import (
	"crypto/x509"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestCertificatesRotateInTwoSteps(t *testing.T) {
	c := &Certificates{IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, Validity: time.Hour, Refresh: time.Minute}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fresh := func(t *testing.T) state {
		var st state
		if _, err := c.advance(&st, start); err != nil {
			t.Fatal(err)
		}
		// through the Secret and back, as every sync reads it
		s := &corev1.Secret{}
		st.write(s)
		return readState(s)
	}
	tests := []struct {
		name            string
		prepare         func(t *testing.T, st *state) time.Time // returns now
		wantChanged     bool
		wantAuthorities int
		wantNewCert     bool
		wantNewCA       bool
	}{
		{name: "a certificate far from expiry is kept", prepare: func(*testing.T, *state) time.Time { return start.Add(10 * time.Minute) },
			wantAuthorities: 1},
		{name: "a due certificate first brings a new authority beside the old, the old certificate still served",
			prepare: func(*testing.T, *state) time.Time { return start.Add(41 * time.Minute) }, wantChanged: true, wantAuthorities: 2, wantNewCA: true},
		{name: "the certificate changes to the new authority's once it has been trusted for two refreshes",
			prepare: func(t *testing.T, st *state) time.Time {
				if _, err := c.advance(st, start.Add(41*time.Minute)); err != nil {
					t.Fatal(err)
				}
				return start.Add(43 * time.Minute)
			}, wantChanged: true, wantAuthorities: 2, wantNewCert: true, wantNewCA: true},
		{name: "an expired certificate is replaced at once", prepare: func(*testing.T, *state) time.Time { return start.Add(61 * time.Minute) },
			wantChanged: true, wantAuthorities: 2, wantNewCert: true, wantNewCA: true},
		{name: "a certificate for other names is replaced at once, by the same authority",
			prepare:     func(_ *testing.T, st *state) time.Time { st.cert.IPAddresses = nil; return start.Add(time.Minute) },
			wantChanged: true, wantAuthorities: 1, wantNewCert: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := fresh(t)
			ca, cert := st.authorities[0], st.cert
			now := tt.prepare(t, &st)
			changed, err := c.advance(&st, now)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged && !tt.wantNewCert {
				t.Errorf("changed %v, want %v", changed, tt.wantChanged)
			}
			if len(st.authorities) != tt.wantAuthorities {
				t.Errorf("%d authorities trusted, want %d", len(st.authorities), tt.wantAuthorities)
			}
			if got := st.cert.SerialNumber.Cmp(cert.SerialNumber) != 0; got != tt.wantNewCert {
				t.Errorf("new certificate %v, want %v", got, tt.wantNewCert)
			}
			if got := !st.authorities[0].Equal(ca); got != tt.wantNewCA {
				t.Errorf("new authority %v, want %v", got, tt.wantNewCA)
			}
			if err := st.cert.CheckSignatureFrom(st.authorities[0]); err != nil && tt.wantNewCert {
				t.Errorf("the new certificate is not the newest authority's: %v", err)
			}
		})
	}
}

// In a cluster the API server calls a webhook through its Service, by the name
// <service>.<namespace>.svc, and verifies the certificate with the caBundle: the
// certificate names the Service and the bundle's authority signed it, through a rotation.
func TestCertificatesVerifyForTheServiceName(t *testing.T) {
	c := &Certificates{DNSNames: []string{"gadget-webhook.gadget-system.svc"}, Validity: time.Hour, Refresh: time.Minute}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var st state
	for _, now := range []time.Time{start, start.Add(41 * time.Minute), start.Add(43 * time.Minute)} { // made, new authority, new certificate
		if _, err := c.advance(&st, now); err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(st.bundle()) {
			t.Fatal("the bundle holds no authority")
		}
		for _, name := range []string{"gadget-webhook.gadget-system.svc", "other.gadget-system.svc"} {
			_, err := st.cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now})
			if want := name == c.DNSNames[0]; (err == nil) != want {
				t.Errorf("at %v, verifying for %s: %v, want verified %v", now.Sub(start), name, err, want)
			}
		}
	}
}
