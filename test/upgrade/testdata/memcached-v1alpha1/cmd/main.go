// The Memcached manager as the example was before its second API version: v1alpha1
// alone, no webhooks. It is the old build of the upgrade rehearsal's test, frozen here so
// that the test builds it from the tree, without the repository's history.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/reconcile"
	cachev1alpha1 "github.com/reconcilekit/reconcilekit/test/upgrade/testdata/memcached-v1alpha1/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/test/upgrade/testdata/memcached-v1alpha1/controller"
)

func main() {
	var metricsAddr, probeAddr string
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to; 0 turns it off.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the liveness (/healthz) and readiness (/readyz) probes bind to.")
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))

	if err := run(ctrl.SetupSignalHandler(), metricsAddr, probeAddr); err != nil {
		ctrl.Log.WithName("setup").Error(err, "Manager failed")
		os.Exit(1)
	}
}

// run serves the Memcached controller until ctx is done.
func run(ctx context.Context, metricsAddr, probeAddr string) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := cachev1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	mgr, err := reconcile.Manager{
		Options: ctrl.Options{
			Scheme:                 scheme,
			Metrics:                metricsserver.Options{BindAddress: metricsAddr},
			HealthProbeBindAddress: probeAddr,
		},
		Controllers: []reconcile.Declaration{controller.New()},
	}.New(cfg)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
