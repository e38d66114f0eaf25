// This file replaces internal/controller/sprocket_controller.go of a project kubebuilder
// v4 scaffolded (kubebuilder init; create api --kind Sprocket): the Sprocket controller,
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

// Sprockets declares the Sprocket controller, adopted by SprocketReconciler: each Sprocket keeps a
// ConfigMap of its own.
var Sprockets = reconcile.Adopt(reconcile.For(&shopv1.Sprocket{}, reconcile.LogicFunc[*shopv1.Sprocket](SprocketReconciler{}.configure), "shop",
	reconcile.WithChildren(&corev1.ConfigMap{}),
))

// SprocketReconciler reconciles a Sprocket object, through the declaration's shell.
type SprocketReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// The role the declaration needs: reconcile.RBACMarkers(Sprockets.Declaration(), scheme).
// +kubebuilder:rbac:groups=shop.example.com,resources=sprockets,verbs=get;list;watch
// +kubebuilder:rbac:groups=shop.example.com,resources=sprockets/status,verbs=patch
// +kubebuilder:rbac:groups=shop.example.com,resources=sprockets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reconciles one Sprocket with the declaration's shell, reading and writing
// through r.Client: what the scaffold's tests call.
func (r *SprocketReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return Sprockets.Reconcile(ctx, r.Client, req)
}

// SetupWithManager sets the declaration up on the manager: what the scaffold's main calls.
func (r *SprocketReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return Sprockets.SetupWithManager(mgr)
}

// configure keeps the Sprocket's ConfigMap. A method of the reconciler's type, so that
// another adopted controller of the package may name its logic configure too.
func (SprocketReconciler) configure(ctx context.Context, w *shopv1.Sprocket, s reconcile.Scope) requeue.Outcome {
	desired := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-sprocket"},
		Data:       map[string]string{"sprocket": w.Name},
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, w, desired); err != nil {
		return requeue.FromError(err)
	}
	return requeue.Done()
}
