package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// scaffoldChecks adds the checks kubebuilder's scaffold (v4) adds in its main, after the
// manager is made, exactly as it adds them.
func scaffoldChecks(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("unable to set up health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("unable to set up ready check: %w", err)
	}
	return nil
}

// startManager starts mgr until the test ends.
func startManager(t *testing.T, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager failed: %v", err)
		}
	})
}

// answers returns a condition that holds once GET url answers code with body in it.
func answers(url string, code int, body string) func(context.Context) error {
	return func(ctx context.Context) error {
		got, text, err := probeGet(ctx, url)
		if err != nil {
			return err
		}
		if got != code || !strings.Contains(text, body) {
			return fmt.Errorf("%s answered %d %q; want %d with %q", url, got, text, code, body)
		}
		return nil
	}
}

// TestManagerTakesTheScaffoldsHealthChecks makes a manager with reconcile.Manager and adds
// the health checks kubebuilder's main adds, unedited: both are taken (they were refused
// with `a check named "healthz" is already added` while the Manager added its own liveness
// check under that name) and served beside the Manager's readiness check.
func TestManagerTakesTheScaffoldsHealthChecks(t *testing.T) {
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
		Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, sized, "scaffolded")},
	}.New(cp(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := scaffoldChecks(mgr); err != nil {
		t.Fatalf("the scaffold's checks: %v; want both taken", err)
	}
	startManager(t, mgr)

	base := "http://" + addr
	reconciletest.Eventually(t, answers(base+"/healthz", http.StatusOK, "ok"))
	reconciletest.Eventually(t, answers(base+"/healthz/healthz", http.StatusOK, "ok"))
	reconciletest.Eventually(t, answers(base+"/readyz/readyz", http.StatusOK, "ok"))
	reconciletest.Eventually(t, answers(base+"/readyz/"+reconcile.ControllersCheck, http.StatusOK, "ok"))
	reconciletest.Eventually(t, answers(base+"/readyz?verbose", http.StatusOK, "[+]controllers ok"))
	reconciletest.Eventually(t, answers(base+"/readyz?verbose", http.StatusOK, "[+]readyz ok"))
}

// TestManagerCompactsOnlyTheDeclaredKinds reads, through the cache of a manager made with
// reconcile.Manager, an object of a declared kind and one of a kind no declaration names,
// as a plain controller of the same manager would: the first is cached without its
// managedFields (ownership.TransformCompact), the second as the API server sent it.
func TestManagerCompactsOnlyTheDeclaredKinds(t *testing.T) {
	ns := cp(t).Namespace(t)
	c := cp(t).Client(t, withBuiltins)
	widget := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "declared"}, Spec: WidgetSpec{Size: 1}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "undeclared"}, StringData: map[string]string{"k": "v"}}
	for _, obj := range []client.Object{widget, secret} {
		if err := c.Create(t.Context(), obj, client.FieldOwner("test")); err != nil {
			t.Fatal(err)
		}
	}

	m := reconciletest.StartManager(t, cp(t).Config, reconcile.Manager{
		Options: manager.Options{
			Scheme: withBuiltins,
			Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		},
		Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, sized, "compacting")},
	})
	for _, tt := range []struct {
		name          string
		obj           client.Object
		managedFields bool
	}{
		{name: "declared", obj: &Widget{ObjectMeta: widget.ObjectMeta}, managedFields: false},
		{name: "undeclared", obj: &corev1.Secret{ObjectMeta: secret.ObjectMeta}, managedFields: true},
	} {
		reconciletest.Eventually(t, func(ctx context.Context) error {
			if err := m.GetClient().Get(ctx, client.ObjectKeyFromObject(tt.obj), tt.obj); err != nil {
				return err
			}
			if got := len(tt.obj.GetManagedFields()) > 0; got != tt.managedFields {
				t.Fatalf("the %s %T as cached has managedFields: %t; want %t", tt.name, tt.obj, got, tt.managedFields)
			}
			return nil
		})
	}
}
