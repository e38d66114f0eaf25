package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// TestReadyzFailsUntilCachesSyncedAndControllerStarted runs a manager made from a
// declaration, as an operator's main does, against an API server whose list of ConfigMaps
// (a list, or the watch an informer lists with) is held until the test releases it:
// /readyz answers 500 (controller-runtime's probe server), and names ConfigMap alone once the other declared kind has synced, for as
// long as the list is held; then it passes.
func TestReadyzFailsUntilCachesSyncedAndControllerStarted(t *testing.T) {
	ns := cp(t).Namespace(t)

	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseList := func() { releaseOnce.Do(func() { close(release) }) }
	var held atomic.Int32
	cfg := reconciletest.Intercept(cp(t).Config, func(r *reconciletest.Request) (*http.Response, error) {
		// An informer lists with a watch that sends the initial objects first, where the
		// API server and client-go support it, and falls back to a list: both are held.
		if r.Resource == "configmaps" && (r.Verb == "list" || r.Verb == "watch") {
			held.Add(1)
			select {
			case <-release:
			case <-r.HTTP.Context().Done(): // the manager stopping: let its informer go
				return nil, r.HTTP.Context().Err()
			}
		}
		return r.Send()
	})

	// The manager does not say which port it bound, so the test finds a free one first.
	addr := reconciletest.FreeAddress(t)
	const check = reconcile.ControllersCheck
	copier := reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](
		func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "copier", reconcile.WithChildren(&corev1.Secret{}))
	reconciletest.StartManager(t, cfg, reconcile.Manager{
		Options: manager.Options{
			Scheme:                 withBuiltins,
			HealthProbeBindAddress: addr,
			Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		},
		Controllers: []reconcile.Declaration{copier},
	})
	// Registered after the manager, so run before its Stop: a held list would keep its
	// informer, and so the manager, from stopping until the request's context ends.
	t.Cleanup(releaseList)

	// probe answers /readyz with its status, as the kubelet sees it, and the check's reason,
	// which only /readyz/<name> gives.
	probe := func(ctx context.Context) (int, string, error) {
		code, _, err := probeGet(ctx, "http://"+addr+"/readyz")
		if err != nil {
			return 0, "", err
		}
		_, reason, err := probeGet(ctx, "http://"+addr+"/readyz/"+check)
		return code, reason, err
	}

	reconciletest.Eventually(t, func(ctx context.Context) error {
		code, reason, err := probe(ctx)
		switch {
		case err != nil:
			return err // the probe server is not listening yet
		case code == http.StatusOK:
			t.Fatalf("/readyz answered 200 while the list of ConfigMaps was held (%d held)", held.Load())
		case code != http.StatusInternalServerError:
			t.Fatalf("/readyz answered %d while the list of ConfigMaps was held; want 500", code)
		case held.Load() == 0:
			return fmt.Errorf("no list of ConfigMaps held yet; /readyz/%s: %s", check, reason)
		case !strings.Contains(reason, "informers not synced: ConfigMap") || strings.Contains(reason, "Secret"):
			return fmt.Errorf("/readyz/%s: %q; want it to name ConfigMap alone", check, reason)
		}
		return nil
	})

	releaseList()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		code, reason, err := probe(ctx)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("/readyz answered %d: %s", code, reason)
		}
		return nil
	})
}

// probeGet returns the status and body of a GET of url.
func probeGet(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}

// TestProbesServeTheOperatorsOwnChecksBesideTheLibrarys adds checks to a manager made
// from a declaration, as an operator's main may: each is served on its endpoint, a
// failing one with 500 and its reason at /readyz/<name>, by controller-runtime's probe
// server; a check added once the manager has started is refused.
func TestProbesServeTheOperatorsOwnChecksBesideTheLibrarys(t *testing.T) {
	ns := cp(t).Namespace(t)
	addr := reconciletest.FreeAddress(t)
	mgr, err := reconcile.Manager{
		Options: manager.Options{
			Scheme:                 withBuiltins,
			HealthProbeBindAddress: addr,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
			Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		},
		Controllers: []reconcile.Declaration{reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](
			func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "probed")},
	}.New(cp(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	var warm atomic.Bool
	if err := mgr.AddReadyzCheck("warm", func(*http.Request) error {
		if !warm.Load() {
			return errors.New("still warming up")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.AddHealthzCheck("alive", healthz.Ping); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager failed: %v", err)
		}
	})

	want := func(path string, code int, body string) func(context.Context) error {
		return func(ctx context.Context) error {
			got, text, err := probeGet(ctx, "http://"+addr+path)
			if err != nil {
				return err
			}
			if got != code || !strings.Contains(text, body) {
				return fmt.Errorf("%s answered %d %q; want %d with %q", path, got, text, code, body)
			}
			return nil
		}
	}
	reconciletest.Eventually(t, want("/readyz/warm", http.StatusInternalServerError, "still warming up"))
	reconciletest.Eventually(t, want("/readyz/"+reconcile.ControllersCheck, http.StatusOK, "ok")) // the library's, once synced
	reconciletest.Eventually(t, want("/readyz", http.StatusInternalServerError, "[-]warm failed"))
	reconciletest.Eventually(t, want("/healthz/alive", http.StatusOK, "ok"))
	reconciletest.Eventually(t, want("/healthz", http.StatusOK, "ok"))
	if err := mgr.AddReadyzCheck("late", healthz.Ping); err == nil || !strings.Contains(err.Error(), "already been created") {
		t.Errorf("a readiness check added after Start: %v; want it refused", err)
	}
	warm.Store(true)
	reconciletest.Eventually(t, want("/readyz", http.StatusOK, "ok"))
}
