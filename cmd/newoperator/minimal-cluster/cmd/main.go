// The Widget manager runs the Widget operator, which keeps a namespace and, in it, a
// StatefulSet of servers for every Widget object.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	starterv1alpha1 "github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/api/v1alpha1"
	// Imported under a name of its own: kubebuilder create api imports the controllers it
	// scaffolds, in internal/controller, as controller.
	declared "github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	// +kubebuilder:scaffold:imports
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

// init fills the scheme with every kind the manager reads and writes. The markers are
// where kubebuilder create api adds to this file, as to a main it scaffolded.
func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(starterv1alpha1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// flags are the manager's command-line settings.
type flags struct {
	metricsAddr, probeAddr     string
	secureMetrics, leaderElect bool
}

func main() {
	var f flags
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to, such as :8443 (served over HTTPS, see --metrics-secure) or :8080; 0 turns it off.")
	flag.BoolVar(&f.secureMetrics, "metrics-secure", true,
		"Serve the metrics over HTTPS, to clients the API server authenticates and authorizes (a ServiceAccount token bound to the metrics-reader ClusterRole); false serves plain HTTP to anyone, for local runs.")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081",
		"The address the liveness (/healthz) and readiness (/readyz) probes bind to.")
	flag.BoolVar(&f.leaderElect, "leader-elect", false,
		"Elect a leader, so that only one replica of the manager reconciles at a time.")
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))

	if err := run(ctrl.SetupSignalHandler(), f); err != nil {
		setupLog.Error(err, "Manager failed")
		os.Exit(1)
	}
}

// run serves the Widget controller until ctx is done.
func run(ctx context.Context, f flags) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	metrics := metricsserver.Options{BindAddress: f.metricsAddr, SecureServing: f.secureMetrics}
	if f.secureMetrics {
		// As kubebuilder's scaffold: the API server authenticates each scraper's token
		// and authorizes it to get /metrics (config/rbac/metrics_*).
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	// The manager follows from the controllers' declarations: their watches, indexes,
	// cache restrictions, and a /readyz that fails until their caches have synced.
	m := reconcile.Manager{
		Options: ctrl.Options{
			Scheme:                 scheme,
			Metrics:                metrics,
			HealthProbeBindAddress: f.probeAddr,
			LeaderElection:         f.leaderElect,
			LeaderElectionID:       "widget.starter.example.com",
			// The process exits as soon as the manager stops, so the lease can
			// be handed over at once instead of waiting for it to expire.
			LeaderElectionReleaseOnCancel: true,
		},
		Controllers: []reconcile.Declaration{declared.New()},
	}
	mgr, err := m.New(cfg)
	if err != nil {
		return err
	}
	// Controllers kubebuilder create api scaffolds are set up here, on the manager.
	// +kubebuilder:scaffold:builder
	return mgr.Start(ctx)
}
