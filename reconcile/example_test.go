package reconcile_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// An operator's controller, declared once: the logic sizes the Widget and records it in the
// status; the shell reads the Widget, keeps Ready, Reconciling and Stalled, writes the
// status when it changed, and releases what the Widget held before it is deleted. The
// manager follows from the declaration: the watches of the Widgets and of their
// Deployments, and a readiness probe that waits for their caches.
func ExampleFor() {
	size := reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		// Bring the world to w.Spec.Size here, with ownership.Ensure(ctx, s.Writer, w, ...).
		w.Status.Phase = "Sized"
		conditions.MarkTrue(w, "Sized", "AsDesired", "%d of %d", w.Spec.Size, w.Spec.Size)
		return requeue.After(time.Hour) // check for drift now and then
	})
	release := func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		// Release what w holds outside the cluster here.
		return requeue.Done()
	}
	widgets := reconcile.For(&Widget{}, size, "widget-operator",
		reconcile.WithChildren(&appsv1.Deployment{})).
		WithFinalizer("test.reconcilekit.io/release", release)

	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	mgr, err := reconcile.Manager{
		Options:     ctrl.Options{Scheme: scheme},
		Controllers: []reconcile.Declaration{widgets},
	}.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Println(err)
	}
}
