// This file is added to internal/controller of the adopted project: the Widget
// controller run as its generated role alone empowers it (reconciletest.Operator), beside
// the scaffold's envtest suite. A request the role does not allow fails the test with the
// +kubebuilder:rbac marker line to add; when every test passes, the role check
// (Operator.Main) names the lines the role lacks for what the tests and the declaration use.

package controller

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"

	shopv1 "example.com/shop/api/v1"
)

// operator is the project's operator under test: the adopted controllers alone.
var operator = &reconciletest.Operator{
	User:           "shop",
	AddToScheme:    shopv1.AddToScheme,
	CRDDirectories: []string{filepath.Join("..", "..", "config", "crd", "bases")},
	Role:           filepath.Join("..", "..", "config", "rbac", "role.yaml"),
	Controllers:    []reconcile.Declaration{Widgets.Declaration()},
	// The plain controllers' markers (the Gadget's) grant what these tests never run:
	// the role check judges only what the role lacks.
	Partial: true,
}

func TestMain(m *testing.M) { os.Exit(operator.Main(m)) }

// TestWidgetKeepsItsConfigMapUnderItsRole runs the Widget controller as its role allows.
func TestWidgetKeepsItsConfigMapUnderItsRole(t *testing.T) {
	e := operator.Env(t)
	e.Run(t)
	w := &shopv1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "first"}}
	if err := e.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		return e.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: "first-config"}, &corev1.ConfigMap{})
	})
}
