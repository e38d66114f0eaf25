// This file replaces internal/controller/widget_controller.go of a project kubebuilder
// v4 scaffolded (kubebuilder init; create api --kind Widget): the Widget controller,
// adopted by reconcilekit, with the reconciler's name, fields and methods kept, so that
// the scaffold's main and its tests use it unedited.

package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"

	shopv1 "example.com/shop/api/v1"
)

// Widgets declares the Widget controller, adopted by WidgetReconciler: each Widget keeps a
// ConfigMap of its own.
var Widgets = reconcile.Adopt(reconcile.For(&shopv1.Widget{}, reconcile.LogicFunc[*shopv1.Widget](WidgetReconciler{}.configure), "shop",
	reconcile.WithChildren(&corev1.ConfigMap{}),
))

// WidgetReconciler reconciles a Widget object, through the declaration's shell.
type WidgetReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// The role the declaration needs: reconcile.RBACMarkers(Widgets.Declaration(), scheme).
// +kubebuilder:rbac:groups=shop.example.com,resources=widgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=shop.example.com,resources=widgets/status,verbs=patch
// +kubebuilder:rbac:groups=shop.example.com,resources=widgets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reconciles one Widget with the declaration's shell, reading and writing
// through r.Client: what the scaffold's tests call.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return Widgets.Reconcile(ctx, r.Client, req)
}

// SetupWithManager sets the declaration up on the manager: what the scaffold's main calls.
func (r *WidgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return Widgets.SetupWithManager(mgr)
}

// configure keeps the Widget's ConfigMap. A method of the reconciler's type, so that
// another adopted controller of the package may name its logic configure too.
func (WidgetReconciler) configure(ctx context.Context, w *shopv1.Widget, s reconcile.Scope) requeue.Outcome {
	desired := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-config"},
		Data:       map[string]string{"widget": w.Name},
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, w, desired); err != nil {
		return requeue.FromError(err)
	}
	return requeue.Done()
}
