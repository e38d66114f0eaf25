package explore_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	keyvalv1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	podsetv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
)

// examples is the root of the example operators.
var examples = filepath.Join("..", "..", "examples")

// operators are the example operators explored, and the mutants of them, on one API
// server that every run shares, each run in a namespace of its own: their children need
// no pods to be compared, and what no controller of the cluster does (garbage
// collection, rollouts) is what the oracles account for.
var (
	podsetOperator = newPodSet("podset-operator", podset.New())
	keyvalOperator = newKeyval("keyval-operator", keyval.New())
	atOperator     = &reconciletest.Operator{
		User:           "at-operator",
		AddToScheme:    cnatv1alpha1.AddToScheme,
		CRDDirectories: []string{filepath.Join(examples, "at", "config", "crd", "bases")},
		Role:           filepath.Join(examples, "at", "config", "rbac", "role.yaml"),
		Controllers:    []reconcile.Declaration{at.New()},
	}
	// The Memcached's controller, as its own tests run it: without its webhooks, which
	// its manager serves only when told to (cmd/main.go's --webhook-namespace), and with
	// which it "reconciles all the same". Served by reconciletest.Env.Run, their
	// certificates would be kept in a Secret its role may not write, and its conversion
	// webhook would have the runs take turns.
	memcachedOperator = &reconciletest.Operator{
		User:           "memcached-operator",
		AddToScheme:    cachev1beta1.AddToScheme,
		CRDDirectories: []string{filepath.Join(examples, "memcached", "config", "crd", "bases")},
		Role:           filepath.Join(examples, "memcached", "config", "rbac", "role.yaml"),
		Controllers:    []reconcile.Declaration{memcached.New()},
	}
)

func newPodSet(user string, d reconcile.Declaration) *reconciletest.Operator {
	return &reconciletest.Operator{
		User:           user,
		AddToScheme:    podsetv1alpha1.AddToScheme,
		CRDDirectories: []string{filepath.Join(examples, "podset", "config", "crd", "bases")},
		Role:           filepath.Join(examples, "podset", "config", "rbac", "role.yaml"),
		Controllers:    []reconcile.Declaration{d},
	}
}

func newKeyval(user string, d reconcile.Declaration) *reconciletest.Operator {
	return &reconciletest.Operator{
		User:           user,
		AddToScheme:    keyvalv1alpha1.AddToScheme,
		CRDDirectories: []string{filepath.Join(examples, "keyval", "config", "crd", "bases")},
		Role:           filepath.Join(examples, "keyval", "config", "rbac", "role.yaml"),
		Controllers:    []reconcile.Declaration{d},
	}
}

// controlPlane is the API server every exploration of the package shares.
var controlPlane *reconciletest.ControlPlane

// started are the operators started on it, stopped at the end.
var started []*reconciletest.Operator

// explored are the lines of the examples' explorations, printed before the summary: the
// runs, points and time of each.
var (
	explored   []string
	exploredMu sync.Mutex
)

// startOn starts o on the shared control plane once, for the test t.
func startOn(t *testing.T, o *reconciletest.Operator) *reconciletest.Operator {
	t.Helper()
	if o.Scheme != nil {
		return o
	}
	o.ControlPlane = controlPlane
	if err := o.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	started = append(started, o)
	return o
}

func TestMain(m *testing.M) {
	if fasttier.SkipPackage() {
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

// nodes is the number of simulated nodes of the control plane the explorations share:
// zero, an API server alone, is the default mode; more, a simulated cluster with a
// controller manager, a scheduler and kwok (docs/exploring.md says when to use which).
var nodes = flag.Int("explore.nodes", 0, "explore on a simulated cluster of this many kwok nodes; 0 explores on an API server alone")

func run(m *testing.M) int {
	flag.Parse()
	// The operators' logs would drown the reports; a failing run's writes say what they did.
	log.SetLogger(logr.Discard())
	cp, err := reconciletest.Start(context.Background(), reconciletest.Options{Nodes: *nodes})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	controlPlane = cp
	code := m.Run()
	for _, o := range started {
		if err := o.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	for _, line := range explored {
		fmt.Println(line)
	}
	fmt.Println(explore.Summary())
	return code
}
