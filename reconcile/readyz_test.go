package reconcile_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// TestReadyzFailsUntilCachesSyncedAndControllerStarted runs a manager made from a
// declaration, as an operator's main does, against an API server whose list of ConfigMaps
// (a list, or the watch an informer lists with) is held until the test releases it:
// /readyz fails, and names ConfigMap alone once the other declared kind has synced, for as
// long as the list is held; then it passes.
func TestReadyzFailsUntilCachesSyncedAndControllerStarted(t *testing.T) {
	ns := cp.Namespace(t)

	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseList := func() { releaseOnce.Do(func() { close(release) }) }
	var held atomic.Int32
	cfg := reconciletest.Intercept(cp.Config, func(r *reconciletest.Request) (*http.Response, error) {
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
	const check = "readyz" // the Manager's
	copier := reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](
		func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }),
		reconcile.WithFieldOwner("copier"), reconcile.WithChildren(&corev1.Secret{}))
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

	// controller-runtime's healthz answers a failed check with 500, not 503; the kubelet
	// takes any status from 400 on as not ready.
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
