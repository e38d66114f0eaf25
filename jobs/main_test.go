package jobs_test

import (
	"os"
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// controlPlane is the package's, started by the first test that needs it.
var controlPlane clustertest.Lazy

// cp is the package's control plane; under -short it skips t.
func cp(t testing.TB) *reconciletest.ControlPlane { t.Helper(); return controlPlane.Get(t) }

func TestMain(m *testing.M) { os.Exit(controlPlane.Main(m)) }
