// The Memcached manager runs the example Memcached operator, which keeps a
// memcached Deployment for every Memcached object.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	cachev1alpha1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	// Imported under a name of its own: kubebuilder create api imports the controllers it
	// scaffolds, in internal/controller, as controller.
	declared "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/sharding"
	"github.com/reconcilekit/reconcilekit/webhook"
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
	// v1beta1 is reconciled and stored; v1alpha1 is still served, converted by the
	// manager's webhook.
	utilruntime.Must(cachev1beta1.AddToScheme(scheme))
	utilruntime.Must(cachev1alpha1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// flags are the manager's command-line settings.
type flags struct {
	metricsAddr, probeAddr, pprofAddr string
	secureMetrics, leaderElect        bool
	concurrency                       int
	shard, leaseNamespace             string
	webhookNamespace, webhookAddr     string
}

// The names of the operator's objects that its webhooks need, as config/default names
// them (its namePrefix memcached-) and as the RBAC markers of package controller limit
// the operator's rights to.
const (
	webhookService   = "memcached-webhook-service"
	webhookSecret    = "memcached-webhook-certificates"
	mutatingConfig   = "memcached-mutating-webhook-configuration"
	validatingConfig = "memcached-validating-webhook-configuration"
	crdName          = "memcacheds.cache.example.com"
)

func main() {
	var f flags
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to, such as :8443 (served over HTTPS, see --metrics-secure) or :8080; 0 turns it off.")
	flag.BoolVar(&f.secureMetrics, "metrics-secure", true,
		"Serve the metrics over HTTPS, to clients the API server authenticates and authorizes (a ServiceAccount token bound to the metrics-reader ClusterRole); false serves plain HTTP to anyone, for local runs.")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081",
		"The address the liveness (/healthz) and readiness (/readyz) probes bind to.")
	flag.StringVar(&f.pprofAddr, "pprof-bind-address", "0",
		"The address Go's profiles (/debug/pprof/) are served on, such as 127.0.0.1:8082; 0 turns them off.")
	flag.BoolVar(&f.leaderElect, "leader-elect", false,
		"Elect a leader, so that only one replica of the manager reconciles at a time.")
	flag.IntVar(&f.concurrency, "max-concurrent-reconciles", declared.Concurrency,
		"How many objects to reconcile at a time.")
	flag.StringVar(&f.shard, "shard", "",
		"Run as this shard of the operator: one of several replicas that split the Memcacheds between them (docs/sharding.md). Empty runs unsharded.")
	flag.StringVar(&f.leaseNamespace, "leader-election-namespace", "",
		"The namespace of the leader election Lease and of the shard Leases; in a cluster, the pod's own.")
	flag.StringVar(&f.webhookNamespace, "webhook-namespace", "",
		"The namespace of the webhook Service and of the Secret that keeps its certificate, in a cluster the pod's own: the manager then serves the Memcached's webhooks (defaulting, validation, and the conversion of v1alpha1) with a certificate it makes and rotates itself, and migrates the stored Memcacheds to v1beta1. Empty (a local run) serves none.")
	flag.StringVar(&f.webhookAddr, "webhook-bind-address", ":9443",
		"The address the webhook server binds to, with --webhook-namespace. An IP address in it, such as 127.0.0.1:9443 for an API server on this machine, is put into the certificate beside the Service's name.")
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))

	if err := run(ctrl.SetupSignalHandler(), f); err != nil {
		setupLog.Error(err, "Manager failed")
		os.Exit(1)
	}
}

// run serves the Memcached controller until ctx is done.
func run(ctx context.Context, f flags) (err error) {
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
	var opts []reconcile.Option
	tp, err := tracerProvider(ctx)
	if err != nil {
		return err
	}
	if tp != nil {
		opts = append(opts, reconcile.WithTracing(tp))
		defer func() { err = errors.Join(err, flushTraces(tp)) }()
	}
	opts = append(opts, reconcile.WithConcurrency(f.concurrency))
	var certs *webhook.Certificates
	var webhookServer ctrlwebhook.Server // the manager's default: none without webhooks
	memcached := declared.New(opts...)
	if f.webhookNamespace != "" {
		// The validating webhook reads ConfigMaps that the manager does not cache (those
		// without the operator's label), so uncached.
		configMaps, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		memcached = declared.WithWebhooks(memcached, configMaps)
		// Every Memcached stored as v1alpha1 is rewritten as v1beta1 once the manager
		// serves the conversion; then v1alpha1 can leave the CRD in a later release.
		memcached = memcached.With(reconcile.WithStorageMigration())
		host, port, err := hostPort(f.webhookAddr)
		if err != nil {
			return fmt.Errorf("--webhook-bind-address: %w", err)
		}
		certs = certificates(f.webhookNamespace, host)
		webhookServer = ctrlwebhook.NewServer(ctrlwebhook.Options{Host: host, Port: port})
	}
	// The manager follows from the controllers' declarations: their watches, indexes,
	// cache restrictions, and a /readyz that fails until their caches have synced.
	m := reconcile.Manager{
		Options: ctrl.Options{
			Scheme:                  scheme,
			Metrics:                 metrics,
			HealthProbeBindAddress:  f.probeAddr,
			PprofBindAddress:        f.pprofAddr,
			LeaderElection:          f.leaderElect,
			LeaderElectionNamespace: f.leaseNamespace,
			LeaderElectionID:        "memcached.cache.example.com",
			// The process exits as soon as the manager stops, so the lease can
			// be handed over at once instead of waiting for it to expire.
			LeaderElectionReleaseOnCancel: true,
			WebhookServer:                 webhookServer,
		},
		Controllers:  []reconcile.Declaration{memcached},
		Certificates: certs,
	}

	// A shard reconciles, and caches, only its share of the Memcacheds and their children.
	var shard *sharding.Shard
	if f.shard != "" {
		if shard, err = sharding.New(sharding.Options{Ring: "memcached-operator", Name: f.shard, Controller: m.Controllers[0]}); err != nil {
			return err
		}
		shard.Configure(&m)
	}
	mgr, err := m.New(cfg)
	if err != nil {
		return err
	}
	// Controllers kubebuilder create api scaffolds are set up here, on the manager.
	// +kubebuilder:scaffold:builder
	if shard != nil {
		return shard.Run(ctx, mgr)
	}
	return mgr.Start(ctx)
}

// certificates makes the webhooks' certificate, for the Service of namespace and for host,
// the address the server binds to, if it is an IP address, and puts its authority into
// the operator's webhook configurations and its CRD's conversion.
func certificates(namespace, host string) *webhook.Certificates {
	certs := &webhook.Certificates{
		Secret:                          types.NamespacedName{Namespace: namespace, Name: webhookSecret},
		DNSNames:                        []string{webhookService + "." + namespace + ".svc"},
		MutatingWebhookConfigurations:   []string{mutatingConfig},
		ValidatingWebhookConfigurations: []string{validatingConfig},
		CustomResourceDefinitions:       []string{crdName},
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		certs.IPAddresses = []net.IP{ip}
	}
	return certs
}

// hostPort splits an address such as :9443 or 127.0.0.1:9443.
func hostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, fmt.Errorf("%q: the port is not a number", addr)
	}
	return host, p, nil
}

// tracerProvider returns a provider that sends the spans of each reconcile and write
// (reconcile.WithTracing) to the OTLP endpoint the environment names, the OpenTelemetry
// way: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, with the
// exporter's other OTEL_EXPORTER_OTLP_* settings and OTEL_SERVICE_NAME. Without an
// endpoint it returns nil: tracing is off. The exporter speaks OTLP over HTTP, which any
// collector accepts, rather than gRPC, which would add a connection-managing client to the
// manager for no gain at a few spans a second.
func tracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return nil, nil
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter)), nil
}

// flushTraces sends the spans still batched and stops tp, giving up after a few seconds
// so that an unreachable collector cannot hold the process's exit.
func flushTraces(tp *sdktrace.TracerProvider) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: sending the last spans: %w", err)
	}
	return nil
}
