package explain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	at "github.com/reconcilekit/reconcilekit/examples/at/controller"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/explain"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The example operators whose stuck states explain is proven on, on one cluster of
// simulated nodes that the tests share, started by the first test that needs it.
var (
	memcachedOperator = example("memcached", cachev1beta1.AddToScheme, memcached.New())
	podSetOperator    = example("podset", appsv1alpha1.AddToScheme, podset.New())
	atOperator        = example("at", cnatv1alpha1.AddToScheme, at.New())
	// The Keyval's cleanup may take seconds here, not its five minutes: the test waits
	// for the deadline to pass.
	keyvalOperator = example("keyval", storev1alpha1.AddToScheme, keyval.New(reconcile.WithCleanupDeadline(cleanupDeadline)))

	started  sync.Once
	cluster  *reconciletest.ControlPlane
	startErr error
)

// cleanupDeadline is how long a deleted Keyval's cleanup may fail before it is reported.
const cleanupDeadline = 15 * time.Second

// operators are the example operators the tests run.
var operators = []*reconciletest.Operator{memcachedOperator, podSetOperator, atOperator, keyvalOperator}

func example(dir string, addToScheme func(*runtime.Scheme) error, controller reconcile.Declaration) *reconciletest.Operator {
	root := filepath.Join("..", "..", "examples", dir, "config")
	return &reconciletest.Operator{
		User:           dir + "-operator",
		AddToScheme:    addToScheme,
		CRDDirectories: []string{filepath.Join(root, "crd", "bases")},
		Role:           filepath.Join(root, "rbac", "role.yaml"),
		Controllers:    []reconcile.Declaration{controller},
	}
}

func TestMain(m *testing.M) {
	// The operators' logs, shown when a test fails.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	code := m.Run()
	if cluster != nil {
		for _, o := range operators {
			if err := o.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				code = 1
			}
		}
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// env runs operator in a namespace of the shared cluster until the test ends, starting
// the cluster if no test has yet.
func env(t *testing.T, operator *reconciletest.Operator) *reconciletest.Env {
	t.Helper()
	reconciletest.SkipShort(t)
	started.Do(func() {
		ctx := context.Background()
		if cluster, startErr = reconciletest.Start(ctx, reconciletest.Options{Nodes: 1}); startErr != nil {
			return
		}
		for _, o := range operators {
			o.ControlPlane = cluster
			if startErr = o.Start(ctx); startErr != nil {
				return
			}
		}
	})
	if startErr != nil {
		t.Fatal(startErr)
	}
	e := operator.Env(t)
	e.Run(t)
	return e
}

// explained returns the text explain prints of ref in namespace.
func explained(ctx context.Context, namespace, ref string) (string, error) {
	r, err := explain.Object(ctx, cluster.Config, namespace, ref)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = r.WriteText(&b)
	return b.String(), err
}
