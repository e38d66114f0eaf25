package reconcile_test

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// A project that makes its manager itself, as kubebuilder's scaffold does, sets a
// declaration up on it beside its other controllers, where the scaffold calls a
// reconciler's SetupWithManager.
func ExampleSetup() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: withBuiltins})
	if err != nil {
		os.Exit(1)
	}
	widgets := reconcile.For(&Widget{}, sized, "widget-operator")
	if err := reconcile.Setup(mgr, widgets); err != nil {
		ctrl.Log.Error(err, "unable to set up the widget controller")
		os.Exit(1)
	}
	// ... the project's other controllers, its health checks, mgr.Start.
}
