// Package tutorial_test runs the kubebuilder book's own test of its CronJob controller
// against the example's, as the book runs it: the controller in a manager, against an API
// server alone (envtest's), where no Job controller changes the Jobs the test makes.
package tutorial_test

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

// operator is the CronJob operator on an API server alone, with the role generated from
// its RBAC markers as its only permissions.
var operator = &reconciletest.Operator{
	User:           "cronjob-operator",
	AddToScheme:    batchv1.AddToScheme,
	CRDDirectories: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	Role:           filepath.Join("..", "..", "config", "rbac", "role.yaml"),
	Controllers:    []reconcile.Declaration{controller.New()},
}

func TestMain(m *testing.M) {
	// The operator's logs, shown when a test fails.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(operator.Main(m))
}
