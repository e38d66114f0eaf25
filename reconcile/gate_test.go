package reconcile_test

import (
	"context"
	"errors"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// gate admits or refuses every object, and counts what the shell asked of it.
type gate struct {
	admit          bool
	err            error
	entered, lefts int
}

func (g *gate) Enter(ctx context.Context, _ client.Object) (map[string]string, bool, error) {
	g.entered++
	return map[string]string{"gated": "yes"}, g.admit, g.err
}

func (g *gate) Leave(ctx context.Context, _ client.Object) { g.lefts++ }

func TestAGateDecidesWhetherTheShellReconciles(t *testing.T) {
	refused := errors.New("not now")
	for _, tc := range []struct {
		name       string
		gate       *gate
		wantRun    bool
		wantErr    error
		wantLefts  int
		wantWrites bool
	}{
		{"admitted: the logic runs with the gate's child labels, and the gate hears the end", &gate{admit: true}, true, nil, 1, true},
		{"refused: nothing runs and nothing is written", &gate{}, false, nil, 0, false},
		{"failed: the error goes to controller-runtime, which retries", &gate{err: refused}, false, refused, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ran := false
			r := f.reconciler(func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				ran = s.Labels["gated"] == "yes"
				w.Status.Phase = "Running"
				return requeue.Done()
			})
			_, err := r.Behind(tc.gate).Reconcile(f.context(t), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.widget)})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Reconcile returned %v, want %v", err, tc.wantErr)
			}
			if ran != tc.wantRun || tc.gate.entered != 1 || tc.gate.lefts != tc.wantLefts {
				t.Errorf("logic ran with the gate's labels: %v, entered %d, left %d; want %v, 1, %d", ran, tc.gate.entered, tc.gate.lefts, tc.wantRun, tc.wantLefts)
			}
			if wrote := f.counter.Writes() > 0; wrote != tc.wantWrites {
				t.Errorf("wrote: %v, want %v (%v)", wrote, tc.wantWrites, f.counter)
			}
		})
	}
}
