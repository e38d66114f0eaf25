// The At manager runs the example At operator, which runs the command of every
// At object once, in a pod, when its schedule comes due.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/sharding"
)

func main() {
	metricsAddr := flag.String("metrics-bind-address", "0",
		"The address the metrics endpoint binds to, such as :8080; 0 turns it off.")
	probeAddr := flag.String("health-probe-bind-address", ":8081",
		"The address the liveness and readiness probes bind to.")
	pprofAddr := flag.String("pprof-bind-address", "0",
		"The address Go's profiles (/debug/pprof/) are served on, such as 127.0.0.1:8082; 0 turns them off.")
	leaderElect := flag.Bool("leader-elect", false,
		"Elect a leader, so that only one replica of the manager reconciles at a time.")
	concurrency := flag.Int("max-concurrent-reconciles", controller.Concurrency,
		"How many objects to reconcile at a time.")
	shard := flag.String("shard", "",
		"Run as this shard of the operator: one of several replicas that split the Ats between them (docs/sharding.md). Empty runs unsharded.")
	leaseNamespace := flag.String("leader-election-namespace", "",
		"The namespace of the leader election Lease and of the shard Leases; in a cluster, the pod's own.")
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))

	if err := run(ctrl.SetupSignalHandler(), *metricsAddr, *probeAddr, *pprofAddr, *leaderElect, *concurrency, *shard, *leaseNamespace); err != nil {
		ctrl.Log.WithName("setup").Error(err, "Manager failed")
		os.Exit(1)
	}
}

// run serves the At controller until ctx is done.
func run(ctx context.Context, metricsAddr, probeAddr, pprofAddr string, leaderElect bool, concurrency int, shardName, leaseNamespace string) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := cnatv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	// The controller never reads managedFields, which are a large share of every cached
	// object (TransformCompact drops them and shares equal label maps); and it caches its
	// own pods only.
	cacheOptions := cache.Options{DefaultTransform: ownership.TransformCompact()}
	controller.CacheOptions(&cacheOptions)
	options := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        pprofAddr,
		Controller:              config.Controller{MaxConcurrentReconciles: concurrency},
		LeaderElection:          leaderElect,
		LeaderElectionNamespace: leaseNamespace,
		LeaderElectionID:        "at.cnat.example.com",
		// The process exits as soon as the manager stops, so the lease can
		// be handed over at once instead of waiting for it to expire.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions,
	}
	// A shard reconciles, and caches, only its share of the Ats and their pods.
	var shard *sharding.Shard
	if shardName != "" {
		shard, err = sharding.New(sharding.Options{Ring: "at-operator", Name: shardName,
			Object: &cnatv1alpha1.At{}, Children: []client.Object{&corev1.Pod{}}})
		if err != nil {
			return err
		}
		shard.Configure(&options)
	}
	mgr, err := ctrl.NewManager(cfg, options)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := controller.Setup(mgr); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	if shard != nil {
		return shard.Run(ctx, mgr)
	}
	return mgr.Start(ctx)
}
