package reconciletest

import (
	"context"
	"fmt"
	"testing"

	rkreconcile "github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// setupLabeler registers an operator in miniature: it labels the ConfigMap named
// settings.
// labeler labels the ConfigMap named settings, through the reconcile shell: its controller
// is named after the kind, "configmap".
var labeler = rkreconcile.For(&corev1.ConfigMap{}, rkreconcile.LogicFunc[*corev1.ConfigMap](
	func(_ context.Context, cm *corev1.ConfigMap, _ rkreconcile.Scope) requeue.Outcome {
		if cm.Name == "settings" {
			metav1.SetMetaDataLabel(&cm.ObjectMeta, "labeled", "true")
		}
		return requeue.Done()
	}), "labeler")

func TestManagerRunsAnOperatorAsItsRole(t *testing.T) {
	cp := cluster(t)
	admin := cp.Client(t, nil)
	role, err := cp.CreateClusterRole(t.Context(), "testdata/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Delete(context.Background(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}})
	})
	ns := cp.Namespace(t)
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
	if err := admin.Create(t.Context(), settings); err != nil {
		t.Fatal(err)
	}
	var requests Counter
	config := requests.Wrap(cp.ConfigFor(t, "labeler", role))
	spec := rkreconcile.Manager{
		Options:     manager.Options{Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}},
		Controllers: []rkreconcile.Declaration{labeler},
	}

	first := StartManager(t, config, spec)

	Eventually(t, func(ctx context.Context) error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(settings), settings); err != nil {
			return err
		}
		if settings.Labels["labeled"] != "true" {
			return fmt.Errorf("not labeled; requests so far:\n%s", &requests)
		}
		return nil
	})
	first.Stop()

	// A restart, which registers the same controller again, reconciles every ConfigMap
	// of the namespace again and writes nothing.
	var all corev1.ConfigMapList
	if err := admin.List(t.Context(), &all, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	ExpectNoWrites(t, &requests, func() {
		StartManager(t, config, spec).AwaitReconciles("configmap", len(all.Items))
	})
}
