package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// TestSetupRunsBesideAPlainController sets a declaration up on a manager the project made
// with ctrl.NewManager, as kubebuilder's main makes it, beside a plain controller-runtime
// controller and the scaffold's health checks: both controllers reconcile their objects,
// and the declaration's readiness check is served beside the scaffold's.
func TestSetupRunsBesideAPlainController(t *testing.T) {
	ns := cp(t).Namespace(t)
	addr := reconciletest.FreeAddress(t)
	mgr, err := ctrl.NewManager(cp(t).Config, ctrl.Options{
		Scheme:                 withBuiltins,
		HealthProbeBindAddress: addr,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The plain controller marks each ConfigMap it reconciles.
	plain := rtreconcile.Func(func(ctx context.Context, req rtreconcile.Request) (rtreconcile.Result, error) {
		var cm corev1.ConfigMap
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
			return rtreconcile.Result{}, client.IgnoreNotFound(err)
		}
		if cm.Annotations["plain"] == "seen" {
			return rtreconcile.Result{}, nil
		}
		patch := client.MergeFrom(cm.DeepCopy())
		cm.Annotations = map[string]string{"plain": "seen"}
		return rtreconcile.Result{}, mgr.GetClient().Patch(ctx, &cm, patch)
	})
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(plain); err != nil {
		t.Fatal(err)
	}
	if err := reconcile.Setup(mgr, reconcile.For(&Widget{}, sized, "adopted")); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if err := scaffoldChecks(mgr); err != nil {
		t.Fatalf("the scaffold's checks: %v; want both taken", err)
	}
	startManager(t, mgr)

	c := cp(t).Client(t, withBuiltins)
	widget := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopted"}, Spec: WidgetSpec{Size: 1}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}}
	for _, obj := range []client.Object{widget, cm} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(widget), widget); err != nil {
			return err
		}
		if !conditions.IsTrue(widget, conditions.Ready) {
			return fmt.Errorf("the Widget is not Ready yet: %v", widget.Status.Conditions)
		}
		return nil
	})
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			return err
		}
		if cm.Annotations["plain"] != "seen" {
			return errors.New("the plain controller has not reconciled the ConfigMap yet")
		}
		return nil
	})
	base := "http://" + addr
	reconciletest.Eventually(t, answers(base+"/readyz/controller-widget", http.StatusOK, "ok"))
	reconciletest.Eventually(t, answers(base+"/readyz?verbose", http.StatusOK, "[+]readyz ok"))
	reconciletest.Eventually(t, answers(base+"/healthz", http.StatusOK, "ok"))
}

// TestSetupRefusesWhatAMadeManagerCannotTake: each declaration Setup cannot set up as
// declared is refused before anything is added, with a message naming the fix.
func TestSetupRefusesWhatAMadeManagerCannotTake(t *testing.T) {
	tests := []struct {
		name    string
		scheme  *runtime.Scheme // withBuiltins if nil
		decls   []reconcile.Declaration
		project func(manager.Manager) // what the project set up before
		want    string
	}{{
		name: "no declaration",
		want: "reconcile: Setup needs at least one controller declaration (reconcile.For)",
	}, {
		name: "a cache restriction",
		decls: []reconcile.Declaration{reconcile.For(&Widget{}, sized, "adopted",
			reconcile.WithCache(&corev1.Pod{}, cache.ByObject{}))},
		want: "reconcile: the Widget controller restricts the cache of corev1.Pod (WithCache), which a manager fixes when it is made",
	}, {
		name:   "a kind the scheme does not know",
		scheme: scheme,
		decls:  []reconcile.Declaration{reconcile.For(&Widget{}, sized, "adopted", reconcile.WithChildren(&corev1.Pod{}))},
		want:   "reconcile: the Widget controller declares corev1.Pod, which the manager's scheme does not know",
	}, {
		name:  "a webhook the project serves too",
		decls: []reconcile.Declaration{reconcile.For(&Widget{}, sized, "adopted").WithDefaulter(noDefaults{})},
		project: func(mgr manager.Manager) {
			mgr.GetWebhookServer().Register(webhook.Path(webhook.Defaulting, widgetGVK), http.NotFoundHandler())
		},
		want: "the Widget controller declares it (WithDefaulter) and the project sets up a webhook of Widget too (SetupWebhookWithManager); remove one of them",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := withBuiltins
			if tt.scheme != nil {
				s = tt.scheme
			}
			mgr, err := ctrl.NewManager(cp(t).Config, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
				WebhookServer: ctrlwebhook.NewServer(ctrlwebhook.Options{})})
			if err != nil {
				t.Fatal(err)
			}
			if tt.project != nil {
				tt.project(mgr)
			}
			err = reconcile.Setup(mgr, tt.decls...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Setup: %v; want %q", err, tt.want)
			}
		})
	}
}

// noDefaults defaults nothing.
type noDefaults struct{}

func (noDefaults) Default(context.Context, *Widget) error { return nil }
