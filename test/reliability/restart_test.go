package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestOperatorsRecoverFromAnAPIServerRestart(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)

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
		t.Fatal("every object converged before the API server could restart")
	}
	down := time.Now()
	if err := cp.RestartAPIServer(); err != nil {
		t.Fatal(err)
	}
	downtime := time.Since(down)

	await(t, s.limit, func(ctx context.Context) error { return converged(ctx, admin, ns, operators...) })
	pods := created.check(t)
	t.Logf("the API server was down for %v with %d of %d objects on their way; all converged, %d At pods created",
		downtime.Round(100*time.Millisecond), pending, 3*s.objects, pods)
}
