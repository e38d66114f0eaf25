// Command peer runs one example operator (Memcached, PodSet, At or Keyval) as its own process, in
// one of three styles: written with Flux's helpers (package flux), with Cluster API's
// (package capi), or built from reconcilekit as the example ships (its declaration in a
// reconcile.Manager). The benchmark (test/benchmark) starts it against a control plane,
// through a proxy that counts its requests, and measures it as every implementation is
// measured: one binary for the three styles, so that they share the Go toolchain, the
// controller-runtime and Kubernetes libraries, the process's flags and its measurement.
//
// It serves controller-runtime's metrics on -metrics-bind-address at /metrics (the
// benchmark reads controller_runtime_reconcile_total and the queue's depth there); at
// /heap, the live heap after two full collections, in bytes: what the benchmark weighs
// per object; at /debug/pprof/heap, its heap profile, to see where that goes (and with
// -cpuprofile, a CPU profile from its start until it stops, written to a file); and at
// /synced, 200 once the cache of every type the operator watches has synced (503 before):
// the benchmark starts its clock after. It logs nothing, as the operators measured in the benchmark's own process.
//
//	peer -style flux -kind memcached -kubeconfig kubeconfig -concurrency 16 -metrics-bind-address 127.0.0.1:8080
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	runtimepprof "runtime/pprof"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/capi"
	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/flux"
)

// The styles an operator is written in.
const (
	Flux         = "flux"
	ClusterAPI   = "capi"
	Reconcilekit = "reconcilekit"
)

// The kinds an operator runs.
const (
	Memcached = "memcached"
	PodSet    = "podset"
	At        = "at"
	Keyval    = "keyval"
)

// wantKinds names the kinds, for an error.
var wantKinds = fmt.Sprintf("want %s, %s, %s or %s", Memcached, PodSet, At, Keyval)

// Options are one operator's settings, from the command line.
type Options struct {
	// Style is Flux, ClusterAPI or Reconcilekit.
	Style string
	// Kind is Memcached, PodSet, At or Keyval.
	Kind string
	// Concurrency is how many objects it reconciles at a time.
	Concurrency int
	// MetricsAddress is where it serves /metrics and /heap; "0" serves nothing.
	MetricsAddress string
	// SkipNameValidation lets several managers of one controller run, one after the
	// other, in one process: the tests'.
	SkipNameValidation bool
}

func main() {
	var o Options
	flag.StringVar(&o.Style, "style", "", "how the operator is written: flux, capi or reconcilekit")
	flag.StringVar(&o.Kind, "kind", "", "the kind it runs: memcached, podset, at or keyval")
	flag.IntVar(&o.Concurrency, "concurrency", 16, "objects reconciled at a time")
	qps := flag.Float64("qps", -1, "the client's requests per second; -1 leaves it unthrottled")
	burst := flag.Int("burst", 0, "the client's burst above -qps")
	flag.StringVar(&o.MetricsAddress, "metrics-bind-address", "0", `where /metrics and /heap are served ("0": nowhere)`)
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the process, from its start until it stops, to this file")
	flag.Parse() // -kubeconfig is controller-runtime's flag, as in every operator's main
	ctrl.SetLogger(logr.Discard())

	cfg, err := config.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(2)
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = runtimepprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "peer:", err)
			os.Exit(2)
		}
		defer runtimepprof.StopCPUProfile() // on SIGTERM too: main returns once the manager has stopped
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mgr, err := New(ctx, cfg, o)
	if err == nil {
		err = mgr.Start(ctx)
	}
	if err != nil {
		runtimepprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

// New makes the manager of the operator o describes, for cfg.
func New(ctx context.Context, cfg *rest.Config, o Options) (manager.Manager, error) {
	scheme := k8sruntime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), cachev1beta1.AddToScheme(scheme),
		appsv1alpha1.AddToScheme(scheme), cnatv1alpha1.AddToScheme(scheme), storev1alpha1.AddToScheme(scheme)); err != nil {
		return nil, err
	}
	if o.Concurrency < 1 {
		return nil, fmt.Errorf("-concurrency is %d; want 1 or more", o.Concurrency)
	}
	watched, ok := watches[o.Kind]
	if !ok {
		return nil, fmt.Errorf("-kind %q: %s", o.Kind, wantKinds)
	}
	synced := &syncedHandler{}
	opts := ctrl.Options{
		Scheme: scheme,
		Metrics: metricsserver.Options{
			BindAddress:   o.MetricsAddress,
			ExtraHandlers: map[string]http.Handler{"/heap": http.HandlerFunc(serveHeap), "/synced": synced, "/debug/pprof/heap": pprof.Handler("heap")},
		},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(o.SkipNameValidation)},
	}
	mgr, err := newManager(ctx, cfg, opts, o)
	if err != nil {
		return nil, err
	}
	// The informers of every watched type, started with the manager, as the benchmark's
	// in-process managers start theirs: /synced answers for all of them.
	for _, obj := range watched {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return nil, err
		}
	}
	synced.cache.Store(mgr.GetCache())
	return mgr, nil
}

// watches are the types the operators of each kind watch.
var watches = map[string][]client.Object{
	Memcached: {&cachev1beta1.Memcached{}, &appsv1.Deployment{}, &corev1.Service{}},
	PodSet:    {&appsv1alpha1.PodSet{}, &appsv1.Deployment{}, &corev1.Pod{}},
	At:        {&cnatv1alpha1.At{}, &corev1.Pod{}},
	Keyval:    {&storev1alpha1.Keyval{}, &appsv1.StatefulSet{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &corev1.ConfigMap{}},
}

// syncedHandler answers 200 once the cache has synced, 503 before.
type syncedHandler struct{ cache atomic.Value } // a cache.Cache, once the manager is made

func (h *syncedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, _ := h.cache.Load().(cache.Cache)
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Millisecond)
	defer cancel()
	if c == nil || !c.WaitForCacheSync(ctx) {
		http.Error(w, "the cache has not synced", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// newManager makes the manager of o's style with its controller.
func newManager(ctx context.Context, cfg *rest.Config, opts ctrl.Options, o Options) (manager.Manager, error) {
	if o.Style == Reconcilekit {
		declare, err := declaration(o.Kind)
		if err != nil {
			return nil, err
		}
		return reconcile.Manager{Options: opts, Controllers: []reconcile.Declaration{declare(reconcile.WithConcurrency(o.Concurrency))}}.New(cfg)
	}
	// The cache holds what reconcilekit's would: managed fields stripped, and only the
	// pods of the kind's own operator, or the Keyval operator's own ConfigMaps (the
	// example's cache declaration), not every one of the cluster.
	opts.Cache = cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
	ours := func(managedBy string) cache.ByObject {
		return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": managedBy})}
	}
	switch o.Kind {
	case PodSet:
		opts.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.Pod{}: ours("podset-operator")}
	case At:
		opts.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.Pod{}: ours("at-operator")}
	case Keyval:
		opts.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.ConfigMap{}: ours("keyval-operator")}
	}
	var setup func(manager.Manager) error
	switch o.Style {
	case Flux:
		setup = fluxSetup(o.Kind, o.Concurrency)
	case ClusterAPI:
		// Cluster API's main turns the priority queue on with its feature gate, on by default.
		opts.Controller.UsePriorityQueue = ptr.To(true)
		setup = capiSetup(ctx, o.Kind, o.Concurrency)
	default:
		return nil, fmt.Errorf("-style %q: want %s, %s or %s", o.Style, Flux, ClusterAPI, Reconcilekit)
	}
	if setup == nil {
		return nil, fmt.Errorf("-kind %q: %s", o.Kind, wantKinds)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	return mgr, setup(mgr)
}

// declaration is the example's reconcilekit declaration of kind.
func declaration(kind string) (func(...reconcile.Option) reconcile.Declaration, error) {
	switch kind {
	case Memcached:
		return func(opts ...reconcile.Option) reconcile.Declaration { return memcached.New(opts...) }, nil
	case PodSet:
		return func(opts ...reconcile.Option) reconcile.Declaration { return podset.New(opts...) }, nil
	case At:
		return func(opts ...reconcile.Option) reconcile.Declaration { return at.New(opts...) }, nil
	case Keyval:
		return func(opts ...reconcile.Option) reconcile.Declaration { return keyval.New(opts...) }, nil
	}
	return nil, fmt.Errorf("-kind %q: %s", kind, wantKinds)
}

func fluxSetup(kind string, concurrency int) func(manager.Manager) error {
	name := kind + "-controller"
	switch kind {
	case Memcached:
		return func(mgr manager.Manager) error {
			return (&flux.MemcachedReconciler{Client: mgr.GetClient(), ControllerName: name}).SetupWithManager(mgr, concurrency)
		}
	case PodSet:
		return func(mgr manager.Manager) error {
			return (&flux.PodSetReconciler{Client: mgr.GetClient(), ControllerName: name}).SetupWithManager(mgr, concurrency)
		}
	case At:
		return func(mgr manager.Manager) error {
			return (&flux.AtReconciler{Client: mgr.GetClient(), ControllerName: name}).SetupWithManager(mgr, concurrency)
		}
	case Keyval:
		return func(mgr manager.Manager) error {
			return (&flux.KeyvalReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), ControllerName: name}).SetupWithManager(mgr, concurrency)
		}
	}
	return nil
}

func capiSetup(ctx context.Context, kind string, concurrency int) func(manager.Manager) error {
	switch kind {
	case Memcached:
		return func(mgr manager.Manager) error {
			return (&capi.MemcachedReconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, concurrency)
		}
	case PodSet:
		return func(mgr manager.Manager) error {
			return (&capi.PodSetReconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, concurrency)
		}
	case At:
		return func(mgr manager.Manager) error {
			return (&capi.AtReconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, concurrency)
		}
	case Keyval:
		return func(mgr manager.Manager) error {
			return (&capi.KeyvalReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(ctx, mgr, concurrency)
		}
	}
	return nil
}

// serveHeap answers the live heap, in bytes, after two full collections: what the
// benchmark's liveHeap reads in its own process.
func serveHeap(w http.ResponseWriter, _ *http.Request) {
	runtime.GC()
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(strconv.FormatUint(stats.HeapAlloc, 10) + "\n"))
}
