package reliability

import (
	"context"
	"fmt"
	"testing"

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
	if err := cp.RestartAPIServer(); err != nil {
		t.Fatal(err)
	}
	writes := requests.Writes()

	await(t, s.limit, func(ctx context.Context) error { return converged(ctx, admin, ns, operators...) })
	pods := created.check(t)
	t.Logf("the API server restarted after the operators' first %d writes; %d objects of each kind converged, %d At pods created",
		writes, s.objects, pods)
}
