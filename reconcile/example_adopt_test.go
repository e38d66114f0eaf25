package reconcile_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// WidgetReconciler is the reconciler kubebuilder scaffolded for the Widget kind, its
// fields as the scaffold made them.
type WidgetReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// Widgets is the Widget controller's declaration, adopted by WidgetReconciler.
var Widgets = reconcile.Adopt(reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](WidgetReconciler{}.configure), "shop",
	reconcile.WithChildren(&corev1.ConfigMap{})))

// configure is the Widget's logic: a method of the reconciler's type, so that the logic of
// another adopted controller of the package may be named configure too.
func (WidgetReconciler) configure(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
	return requeue.Done()
}

// Reconcile is the scaffold's, which its tests call: the declaration's shell, through
// r.Client.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return Widgets.Reconcile(ctx, r.Client, req)
}

// SetupWithManager is the scaffold's, which its main calls: reconcile.Setup.
func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return Widgets.SetupWithManager(mgr)
}

// A reconciler kubebuilder scaffolded keeps its Reconcile and SetupWithManager, each one
// call of the adopted declaration's; the RBAC markers to put beside it are the
// declaration's, and its readiness check is served at /readyz/ and the check's name.
func ExampleAdopt() {
	markers, err := reconcile.RBACMarkers(Widgets.Declaration(), withBuiltins)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range markers {
		fmt.Println(m)
	}
	fmt.Println("/readyz/" + reconcile.SetupCheck(Widgets.Declaration()))
	// Output:
	// // +kubebuilder:rbac:groups=test.reconcilekit.io,resources=widgets,verbs=get;list;watch
	// // +kubebuilder:rbac:groups=test.reconcilekit.io,resources=widgets/status,verbs=patch
	// // +kubebuilder:rbac:groups=test.reconcilekit.io,resources=widgets/finalizers,verbs=update
	// // +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
	// // +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
	// /readyz/controller-widget
}
