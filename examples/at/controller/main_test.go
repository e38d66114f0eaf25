package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/at/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

var (
	// cp is the cluster the tests share, each in namespaces of its own.
	cp *reconciletest.ControlPlane
	// role is the ClusterRole generated from the controller's RBAC markers.
	role string

	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	// The operators' logs, shown when a test fails.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, cnatv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	var err error
	cp, err = reconciletest.Start(ctx, reconciletest.Options{
		CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
		Nodes:          2,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if role, err = cp.CreateClusterRole(ctx, filepath.Join("..", "config", "rbac", "role.yaml")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// env is a test's corner of the cluster: a namespace that enforces the restricted Pod
// Security Standard, an administrator's client for the test's own moves, and the
// operator's identity, which only the generated role empowers.
type env struct {
	client.Client
	ns string
	// config is the operator's; a test may wrap it before run.
	config *rest.Config
	// requests counts every request of every manager run has started.
	requests reconciletest.Counter
}

func newEnv(t *testing.T) *env {
	return &env{
		Client: cp.Client(t, scheme),
		ns:     cp.RestrictedNamespace(t),
		config: cp.ConfigFor(t, "at-operator", role),
	}
}

// run starts the operator as cmd/main.go does, but watching the test's namespace alone.
func (e *env) run(t *testing.T) *reconciletest.Manager {
	opts := cache.Options{
		DefaultNamespaces: map[string]cache.Config{e.ns: {}},
		DefaultTransform:  ownership.TransformCompact(),
	}
	controller.CacheOptions(&opts)
	return reconciletest.StartManager(t, e.requests.Wrap(e.config), ctrl.Options{Scheme: scheme, Cache: opts}, controller.Setup)
}
