package controller_test

import (
	"os"
	"path/filepath"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	starterv1alpha1 "github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// operator is widget-operator on a cluster of simulated nodes, whose claims bind to
// volumes of its default StorageClass, that the tests share, each in a namespace of its
// own, with the role generated from its RBAC markers as its only permissions.
var operator = &reconciletest.Operator{
	User:           "widget-operator",
	AddToScheme:    starterv1alpha1.AddToScheme,
	CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
	Role:           filepath.Join("..", "config", "rbac", "role.yaml"),
	Nodes:          2,
	Controllers:    []reconcile.Declaration{controller.New()},
}

func TestMain(m *testing.M) {
	// The operator's logs, shown when a test fails; without a logger controller-runtime
	// prints a stack of its own instead ("SetLogger was never called").
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	os.Exit(operator.Main(m))
}
