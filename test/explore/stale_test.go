package explore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	podsetv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// TestExploringStaleReadsCatchesACreateDecidedOnALaggingCache explores, with Stale alone,
// an operator that looks for its PodSet's Deployment in its cache, creates one under a
// generated name when it finds none, and looks again half a second later: the classic
// bug of a controller that trusts its cache right after its own create. With
// read-your-own-writes off (WithExpectationTimeout(0)), the second look, while the cache
// of Deployments lags the create, finds none and makes a second Deployment: a Stale point
// at a read after a write catches it. With it on, as package reconcile sets it by
// default, the second look waits until the cache shows the create: no point at a read
// faults it. (A point at a list may fault both: a restarted process remembers none of
// its writes.) Like the mutants but the cheapest, it is explored by make test-explore
// (-explore.mutants), not in the package's usual tests, which it would lengthen by half a
// minute.
func TestExploringStaleReadsCatchesACreateDecidedOnALaggingCache(t *testing.T) {
	if !*allMutants {
		t.Skip("explored with the mutants: -explore.mutants (make test-explore)")
	}
	cases := []struct {
		name   string
		opts   []reconcile.Option
		caught bool
		// caughtBy are the oracles of the mutant. The control is one too: a point at a
		// list, which restarts the operator, faults it by the same oracles (a restarted
		// process remembers none of its writes); only a point at a read must not.
		caughtBy []explore.Oracle
	}{
		{"read-your-own-writes off", []reconcile.Option{reconcile.WithExpectationTimeout(0)}, true, []explore.Oracle{explore.CreatedTwice, explore.EndState}},
		{"read-your-own-writes on", nil, false, []explore.Oracle{explore.CreatedTwice, explore.EndState}},
	}
	// Started one after another on the shared control plane, then explored side by side,
	// and beside the package's other explorations.
	operators := make([]*reconciletest.Operator, len(cases))
	for i, tc := range cases {
		opts := append([]reconcile.Option{reconcile.WithChildren(&appsv1.Deployment{})}, tc.opts...)
		user := "mutant-stale-read-" + strings.ReplaceAll(tc.name, " ", "-")
		operators[i] = startOn(t, mutantOperator(user, reconcile.For(&podsetv1alpha1.PodSet{}, cacheAfterCreate{}, "podset-operator", opts...)))
	}
	t.Parallel()
	for i, tc := range cases {
		o := operators[i]
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			r := explore.Explore(t, explore.Exploration{
				Operator: o,
				Workload: podsetOnce(),
				Classes:  []explore.Class{explore.Stale},
				Mutant:   "a create decided on a cache that lags it, " + tc.name,
				CaughtBy: tc.caughtBy,
			})
			var atRead []string
			for _, v := range r.Violations {
				if strings.Contains(v.Run, "@write") {
					atRead = append(atRead, v.String())
				}
			}
			switch {
			case tc.caught && len(atRead) == 0:
				t.Fatalf("no Stale point at a read caught the mutant: %d runs, violations %v", r.Runs, r.Violations)
			case !tc.caught && len(atRead) > 0:
				t.Fatalf("a Stale point at a read faulted an operator that reads its own writes: %v", atRead)
			case tc.caught:
				t.Logf("caught at a read: %v", atRead[0])
			}
		})
	}
}

// cacheAfterCreate creates the PodSet's Deployment under a generated name unless its
// cache shows one the PodSet controls, and looks again soon after a create, to record
// the Deployment's name in the status.
type cacheAfterCreate struct{}

func (cacheAfterCreate) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if found, err := recordControlled(ctx, s.Client, ps); err != nil || found {
		return requeue.Retry(err)
	}
	d := podset.Deployment(ps)
	d.Name, d.GenerateName = "", ps.Name+"-"
	if err := controllerutil.SetControllerReference(ps, d, s.Client.Scheme()); err != nil {
		return requeue.Terminal(err)
	}
	if err := s.Client.Create(ctx, d); err != nil {
		return requeue.Retry(err)
	}
	return requeue.After(500 * time.Millisecond)
}
