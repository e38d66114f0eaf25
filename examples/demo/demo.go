package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/controlplane"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	cronjobv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	cronjob "github.com/reconcilekit/reconcilekit/examples/cronjob/controller"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// operator is one of the example operators, declared as its cmd/main.go declares it.
type operator struct {
	dir         string // under examples/
	addToScheme func(*runtime.Scheme) error
	controller  reconcile.Declaration
}

// operators are the examples the demo runs.
var operators = []operator{
	{"memcached", cachev1beta1.AddToScheme, memcached.New()},
	{"podset", appsv1alpha1.AddToScheme, podset.New()},
	{"at", cnatv1alpha1.AddToScheme, at.New()},
	{"keyval", storev1alpha1.AddToScheme, keyval.New()},
	{"cronjob", cronjobv1.AddToScheme, cronjob.New()},
}

// options configure a run of the demo.
type options struct {
	root        string        // the repository's root
	timeout     time.Duration // how long the operators have to converge, from the start
	keepRunning bool          // stay up after converging, until ctx is done
	out         io.Writer     // receives the status table
	redraw      bool          // redraw the table in place, out being a terminal
}

// errTimeout is why a run stops waiting for the operators.
var errTimeout = errors.New("timed out")

// run runs the demo until the operators converge, or with keepRunning until ctx is done.
// It returns an error if they do not converge in time, if ctx ends first, or if anything
// on the way fails; it stops whatever it started in every case.
func run(ctx context.Context, opts options) (err error) {
	start := time.Now()
	// An operator that fails stops the demo, and the demo gives up at the deadline.
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	waiting, cancel := context.WithDeadlineCause(ctx, start.Add(opts.timeout), errTimeout)
	defer cancel()

	scheme, err := newScheme()
	if err != nil {
		return err
	}
	var crds []string
	for _, op := range operators {
		crds = append(crds, filepath.Join(opts.root, "examples", op.dir, "config", "crd", "bases"))
	}
	fmt.Fprintln(opts.out, "Starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok...")
	cp, err := controlplane.Start(waiting, controlplane.Options{CRDDirectories: crds, Nodes: 1})
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	fmt.Fprintf(opts.out, "Control plane up in %v, CRDs installed.\n", since(start))

	stopOperators, err := startOperators(ctx, fail, cp.Config, scheme)
	if err != nil {
		return err
	}
	defer stopOperators() // before the control plane stops

	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	samples, err := applySamples(waiting, c, opts.root, serializer.NewCodecFactory(scheme).UniversalDeserializer())
	if err != nil {
		return err
	}
	applied := time.Now()
	fmt.Fprintln(opts.out, "Operators running, samples applied.")

	s := screen{out: opts.out, redraw: opts.redraw, start: start}
	last, err := s.watch(waiting, c, samples, table.converged)
	switch {
	case errors.Is(err, errTimeout): // the last table is on the screen
		return fmt.Errorf("not converged within %v; still waiting for %s", opts.timeout, last.pending())
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted before the operators converged")
	case err != nil:
		return err
	}
	fmt.Fprintf(opts.out, "All five converged %v after the samples were applied, %v after the start.\n",
		since(applied), since(start))
	if !opts.keepRunning {
		return nil
	}

	help, removeKubeconfig, err := kubectlHelp(cp.Config, os.Getenv("KUBEBUILDER_ASSETS"))
	if err != nil {
		return err
	}
	defer removeKubeconfig()
	s.footer = "Still running; press Ctrl-C to stop.\n" + help
	if !s.redraw { // else every redraw shows it
		fmt.Fprint(opts.out, s.footer)
	}
	if _, err := s.watch(ctx, c, samples, nil); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// newScheme knows the types of Kubernetes and of every example.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	for _, op := range operators {
		if err := op.addToScheme(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// startOperators starts a manager for every operator, each as its cmd/main.go makes it
// but serving neither metrics nor health probes, since they share a process. They run
// until ctx is done; one that fails calls fail. stop stops them and waits until they have.
func startOperators(ctx context.Context, fail context.CancelCauseFunc, cfg *rest.Config, scheme *runtime.Scheme) (stop func(), err error) {
	var running sync.WaitGroup
	stop = func() { fail(nil); running.Wait() }
	for _, op := range operators {
		mgr, err := reconcile.Manager{
			Options: ctrl.Options{
				Scheme:                 scheme,
				Metrics:                metricsserver.Options{BindAddress: "0"},
				HealthProbeBindAddress: "0",
			},
			Controllers: []reconcile.Declaration{op.controller},
		}.New(cfg)
		if err != nil {
			stop()
			return nil, fmt.Errorf("the %s operator: %w", op.dir, err)
		}
		running.Go(func() {
			if err := mgr.Start(ctx); err != nil {
				fail(fmt.Errorf("the %s operator stopped: %w", op.dir, err))
			}
		})
	}
	return stop, nil
}

// applySamples creates the samples of every example in the default namespace, with the
// At ones scheduled a few seconds ahead so that they are seen waiting, and returns them.
func applySamples(ctx context.Context, c client.Client, root string, decoder runtime.Decoder) ([]client.Object, error) {
	var samples []client.Object
	for _, op := range operators {
		found := len(samples)
		dir := filepath.Join(root, "examples", op.dir, "config", "samples")
		files, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if filepath.Ext(f.Name()) != ".yaml" || f.Name() == "kustomization.yaml" {
				continue
			}
			file := filepath.Join(dir, f.Name())
			sample, err := decodeFile(file, decoder)
			if runtime.IsNotRegisteredError(errors.Unwrap(err)) { // decodeFile wraps it
				// A sample of a version the operator does not reconcile (the Memcached's
				// v1alpha1): the API server would convert it through the operator's webhook,
				// which the demo does not serve.
				continue
			}
			if err != nil {
				return nil, err
			}
			if a, ok := sample.(*cnatv1alpha1.At); ok {
				a.Spec.Schedule = time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339)
			}
			if sample.GetNamespace() == "" {
				sample.SetNamespace("default")
			}
			if err := c.Create(ctx, sample); err != nil {
				return nil, fmt.Errorf("applying %s: %w", file, err)
			}
			samples = append(samples, sample)
		}
		if len(samples) == found {
			return nil, fmt.Errorf("no samples in %s", dir)
		}
	}
	return samples, nil
}

// decodeFile decodes the one object a file holds.
func decodeFile(file string, decoder runtime.Decoder) (client.Object, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", file, err)
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("decoding %s: %T is not an object", file, obj)
	}
	return o, nil
}

// since is the time since t, rounded for people.
func since(t time.Time) time.Duration {
	return time.Since(t).Round(100 * time.Millisecond)
}
