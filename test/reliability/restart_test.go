package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestOperatorsRecoverFromAnAPIServerRestart(t *testing.T) {
	restartMidConvergence(t, "the API server", func() (time.Duration, error) {
		down := time.Now()
		err := cp.RestartAPIServer()
		return time.Since(down), err
	})
}

// restartMidConvergence starts the operators in a namespace of their own, creates objects
// of each kind, and once the operators have started on them but not finished, restarts
// part of the control plane with restart, which says how long it was down. Everything
// must then converge, with nothing created twice.
func restartMidConvergence(t *testing.T, what string, restart func() (time.Duration, error)) {
	s := sized()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	explainFailure(t, admin, ns)

	var created ledger
	var requests reconciletest.Counter
	for _, op := range operators {
		watchStatus(t, ns, op)
		op.start(t, requests.Wrap(created.wrap(op.config(t))), ns)
	}
	for _, op := range operators {
		op.create(t, admin, ns, op.name, s.objects)
	}
	// In the middle of convergence: the operators have started, not finished.
	await(t, s.limit, func(context.Context) error {
		if n := requests.Writes(); n < s.objects {
			return fmt.Errorf("the operators have made %d writes", n)
		}
		return nil
	})
	pending := 0
	for _, op := range operators {
		p, err := op.unconverged(t.Context(), admin, ns)
		if err != nil {
			t.Fatal(err)
		}
		pending += len(p)
	}
	if pending == 0 {
		t.Fatalf("every object converged before %s could restart", what)
	}
	downtime, err := restart()
	if err != nil {
		t.Fatal(err)
	}

	await(t, s.limit, func(ctx context.Context) error { return converged(ctx, admin, ns, operators...) })
	pods := created.check(t)
	t.Logf("%s was down for %v with %d of %d objects on their way; all converged, %d At pods created",
		what, downtime.Round(100*time.Millisecond), pending, 3*s.objects, pods)
}
