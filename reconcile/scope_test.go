package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// TestManagerRefusesANamespacedOwnerOfAClusterScopedChildKind makes managers of a
// namespaced Widget declaring children of either scope, with the scopes the API server
// gives: a cluster-scoped child kind is refused at once, naming the marker that makes the
// owner cluster-scoped, instead of an operator that starts and then stalls on every object.
func TestManagerRefusesANamespacedOwnerOfAClusterScopedChildKind(t *testing.T) {
	done := reconcile.LogicFunc[*Widget](func(context.Context, *Widget, reconcile.Scope) requeue.Outcome { return requeue.Done() })
	tests := []struct {
		name     string
		children []client.Object
		refused  bool
	}{
		{"namespaced children", []client.Object{&corev1.ConfigMap{}, &rbacv1.RoleBinding{}}, false},
		{"a ClusterRole", []client.Object{&corev1.ConfigMap{}, &rbacv1.ClusterRole{}}, true},
		{"a Namespace", []client.Object{&corev1.Namespace{}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reconcile.Manager{
				Options: manager.Options{
					Scheme:     withBuiltins,
					Metrics:    metricsserver.Options{BindAddress: "0"},
					Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
				},
				NoMetrics:   true,
				Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, done, "scoped", reconcile.WithChildren(tt.children...))},
			}.New(cp(t).Config)
			if !tt.refused {
				if err != nil {
					t.Fatalf("New = %v; want a manager", err)
				}
				return
			}
			var invalid *ownership.InvalidOwnerError
			if !errors.As(err, &invalid) || !strings.Contains(err.Error(), ownership.ClusterScopeMarker) || !strings.Contains(invalid.Owner, "Widget") {
				t.Fatalf("New = %v; want an *ownership.InvalidOwnerError of Widget naming %s", err, ownership.ClusterScopeMarker)
			}
		})
	}
}

// TestReconcileStallsOnANamespacedOwnerOfAClusterScopedChild reconciles a namespaced
// Widget whose logic makes a ClusterRole, through a shell made without a manager (so
// without New's check): the refusal is terminal, Stalled with ReasonInvalidOwner naming the
// marker, written once; a second reconcile writes nothing and is not retried.
func TestReconcileStallsOnANamespacedOwnerOfAClusterScopedChild(t *testing.T) {
	counter := &reconciletest.Counter{}
	c, err := client.New(counter.Wrap(cp(t).Config), client.Options{Scheme: withBuiltins})
	if err != nil {
		t.Fatal(err)
	}
	widget := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: cp(t).Namespace(t), Name: "owner"}}
	if err := c.Create(t.Context(), widget); err != nil {
		t.Fatal(err)
	}
	r := reconcile.ShellOf(c, reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "owned-by-" + w.Namespace}}
		_, _, err := ownership.Ensure(ctx, s.Writer, w, role)
		return requeue.Retry(err)
	}), reconcile.TestFieldOwner, reconcile.WithChildren(&rbacv1.ClusterRole{})), reconcile.WithRecorder(events.NewFakeRecorder(10)))

	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(widget)}
	for i, wantWrites := range []int{1, 0} {
		counter.Reset()
		result, err := r.Reconcile(t.Context(), req)
		if !errors.Is(err, crreconcile.TerminalError(nil)) || result.RequeueAfter != 0 {
			t.Errorf("reconcile %d = %+v, %v; want a terminal error and no requeue", i+1, result, err)
		}
		if counter.Writes() != wantWrites {
			t.Errorf("reconcile %d wrote %d times; want %d", i+1, counter.Writes(), wantWrites)
		}
	}
	live := &Widget{}
	if err := c.Get(t.Context(), req.NamespacedName, live); err != nil {
		t.Fatal(err)
	}
	stalled := conditions.Find(live, conditions.Stalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != reconcile.ReasonInvalidOwner ||
		!strings.Contains(stalled.Message, ownership.ClusterScopeMarker) {
		t.Errorf("Stalled = %+v; want True, %s, naming %s", stalled, reconcile.ReasonInvalidOwner, ownership.ClusterScopeMarker)
	}
	if r := conditions.Find(live, conditions.Reconciling); r != nil {
		t.Errorf("Reconciling = %+v; want none: nothing is retried", r)
	}
}
