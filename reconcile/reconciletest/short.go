package reconciletest

import (
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// SkipShort skips t under go test -short, saying why: t needs a control plane, and -short
// runs the tests that need none, without the control-plane binaries. Without -short it
// does nothing, and a missing binary is the failure Start reports, which names the
// command that builds it.
//
// Env, StartAPIServer and StartCluster call it, and under -short Operator.Main starts no
// control plane; a test that uses Operator.ControlPlane before its Env, or a control plane
// of its own from Start, calls SkipShort first.
func SkipShort(t testing.TB) {
	t.Helper()
	fasttier.Skip(t)
}
