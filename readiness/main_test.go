package readiness_test

import (
	"os"
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

var cp *reconciletest.ControlPlane

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, reconciletest.Options{}, &cp)) }
