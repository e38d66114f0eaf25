package reliability

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// writeFaultRate is the rate of each of the four kinds of fault; together they fail one
// write in ten.
const writeFaultRate = 0.026

func TestOperatorsConvergeWhileTenPercentOfWritesFail(t *testing.T) {
	convergeDespiteFaults(t, sized().objects, sized().limit)
}

// convergeDespiteFaults creates n objects of each kind while one write in ten fails, and
// waits for every one to converge.
func convergeDespiteFaults(t *testing.T, n int, limit time.Duration) {
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)

	var (
		created ledger
		tried   reconciletest.Counter
		lost    = &lostReplies{rate: writeFaultRate}
		faults  []*reconciletest.Faults
	)
	for _, op := range operators {
		watchStatus(t, ns, op)
		// Innermost, next to the server, the ledger sees what really happened;
		// outermost, the counter sees every write the operator tried.
		cfg := lost.wrap(created.wrap(op.config(t)))
		for _, code := range []int{http.StatusConflict, http.StatusInternalServerError, http.StatusGatewayTimeout} {
			f := &reconciletest.Faults{Verbs: []string{"create", "update", "patch", "delete"}, Rate: writeFaultRate, Code: code}
			faults = append(faults, f)
			cfg = f.Wrap(cfg)
		}
		op.start(t, tried.Wrap(cfg), ns)
	}
	for _, op := range operators {
		op.create(t, admin, ns, op.name, n)
	}

	await(t, limit, func(ctx context.Context) error { return converged(ctx, admin, ns, operators...) })
	failed := int(lost.lost.Load())
	for _, f := range faults {
		failed += f.Injected()
	}
	pods := created.check(t)
	t.Logf("%d objects of each kind converged; %d of %d writes failed (%.1f%%); %d At pods created",
		n, failed, tried.Writes(), 100*float64(failed)/float64(tried.Writes()), pods)
}
