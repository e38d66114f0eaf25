package reconcile

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// probedManager is a manager whose health probes the library serves in place of
// controller-runtime's probe server, which answers a failing check with 500 Internal
// Server Error. A probe that fails because the operator is not ready yet is the server
// being unavailable, not broken: the probes answer 503 Service Unavailable, which load
// balancers and uptime checks read as "try again" and the kubelet, like any status from
// 400, as not ready. Checks added with AddHealthzCheck and AddReadyzCheck are served as
// controller-runtime would: /readyz, /readyz/<name> with its reason, ?exclude=<name>.
type probedManager struct {
	manager.Manager

	mu      sync.Mutex
	started bool
	readyz  healthz.Handler
	healthz healthz.Handler
}

// serveProbes makes mgr's probes the library's, served on ln at the endpoints opts names.
func serveProbes(mgr manager.Manager, ln net.Listener, readiness, liveness string) (*probedManager, error) {
	m := &probedManager{
		Manager: mgr,
		readyz:  healthz.Handler{Checks: map[string]healthz.Checker{}},
		healthz: healthz.Handler{Checks: map[string]healthz.Checker{}},
	}
	mux := http.NewServeMux()
	for path, h := range map[string]http.Handler{readiness: &m.readyz, liveness: &m.healthz} {
		h = unavailableOnFailure(http.StripPrefix(path, h))
		mux.Handle(path, h)
		mux.Handle(path+"/", h) // /readyz/<name>
	}
	err := mgr.Add(&manager.Server{
		Name:     "health probe",
		Server:   &http.Server{Handler: mux, ReadHeaderTimeout: probeHeaderTimeout},
		Listener: ln,
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// probeHeaderTimeout bounds how long a probe may take to send its request's headers, so
// that a client that never finishes cannot hold a connection (as controller-runtime's).
const probeHeaderTimeout = 32 * time.Second

// AddReadyzCheck adds a readiness check, served on the readiness endpoint.
func (m *probedManager) AddReadyzCheck(name string, check healthz.Checker) error {
	return m.add(m.readyz.Checks, name, check)
}

// AddHealthzCheck adds a liveness check, served on the liveness endpoint.
func (m *probedManager) AddHealthzCheck(name string, check healthz.Checker) error {
	return m.add(m.healthz.Checks, name, check)
}

func (m *probedManager) add(checks map[string]healthz.Checker, name string, check healthz.Checker) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started { // the handler reads the checks unlocked once it serves
		return fmt.Errorf("reconcile: check %q added after the manager started: add checks before Start", name)
	}
	if _, ok := checks[name]; ok {
		if name == ControllersCheck || name == WebhooksCheck {
			return fmt.Errorf("reconcile: a check named %q is already added, by reconcile.Manager: name yours otherwise", name)
		}
		return fmt.Errorf("reconcile: a check named %q is already added: name each check once", name)
	}
	checks[name] = check
	return nil
}

// Start marks the checks fixed and runs the manager.
func (m *probedManager) Start(ctx context.Context) error {
	m.mu.Lock()
	m.started = true
	m.mu.Unlock()
	return m.Manager.Start(ctx)
}

// unavailableOnFailure answers 503 where h answers 500: healthz.Handler's status for a
// failing check.
func unavailableOnFailure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(unavailableWriter{w}, r)
	})
}

type unavailableWriter struct{ http.ResponseWriter }

func (w unavailableWriter) WriteHeader(code int) {
	if code == http.StatusInternalServerError {
		code = http.StatusServiceUnavailable
	}
	w.ResponseWriter.WriteHeader(code)
}

// probeListener binds addr as controller-runtime would bind its probe server's: "" and
// "0" serve no probes.
func probeListener(addr string) (net.Listener, error) {
	if addr == "" || addr == "0" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("reconcile: binding the health probe address %q: %w", addr, err)
	}
	return ln, nil
}
