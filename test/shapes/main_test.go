// Package shapes_test runs every tool of the library on small operators of the common
// shapes, one operator a shape (docs/testing.md, "shape x tool"): a table with WantStatus
// and WantObjects, Env.Run under the operator's role, explore, explain and the local cluster.
package shapes_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// operator runs the shapes' controllers together, under one role (testdata/role.yaml),
// which the role check at the end of the tests (Operator.Main) holds to what they used.
var operator = &reconciletest.Operator{
	User:           "shapes-operator",
	AddToScheme:    addToScheme,
	CRDDirectories: []string{filepath.Join("testdata", "crd")},
	Role:           filepath.Join("testdata", "role.yaml"),
	Controllers:    []reconcile.Declaration{tenants(), sites(), accesses(), buckets(), batches(), mirrors(vault)},
}

func TestMain(m *testing.M) {
	// The operators' logs would drown a failure; the failure names its cause.
	log.SetLogger(logr.Discard())
	os.Exit(operator.Main(m))
}
