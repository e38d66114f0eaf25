package controller_test

import (
	"os"
	"path/filepath"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	batchv1 "github.com/reconcilekit/reconcilekit/examples/cronjob/api/v1"
	"github.com/reconcilekit/reconcilekit/examples/cronjob/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// operator is the CronJob operator on a cluster of simulated nodes that the tests share,
// each in a namespace of its own, with the role generated from its RBAC markers as its
// only permissions. The cluster's Job controller runs the Jobs; their pods complete on
// the simulated nodes about a second after they start.
var operator = &reconciletest.Operator{
	User:           "cronjob-operator",
	AddToScheme:    batchv1.AddToScheme,
	CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
	Role:           filepath.Join("..", "config", "rbac", "role.yaml"),
	Nodes:          2,
	Controllers:    []reconcile.Declaration{controller.New()},
}

func TestMain(m *testing.M) {
	// The operator's logs, shown when a test fails.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(operator.Main(m))
}

// env is a test's corner of the cluster.
type env struct{ *reconciletest.Env }

func newEnv(t *testing.T) *env { return &env{operator.Env(t)} }
