package reconciletest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An operator started on a shared control plane gets its role under a name of its own;
// each test's Env runs it in the test's namespace alone, counts its requests, and stops
// it when the test ends. Stop removes the role and leaves the control plane running.
func TestOperatorRunsInTheTestsNamespaceAsItsRoleAlone(t *testing.T) {
	cp := cluster(t)
	labeler := &Operator{User: "labeler", Role: "testdata/role.yaml", Setup: setupLabeler, ControlPlane: cp}
	if err := labeler.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = labeler.Stop() }) // a second Stop does nothing
	admin := cp.Client(t, nil)
	var role rbacv1.ClusterRole
	if err := admin.Get(t.Context(), client.ObjectKey{Name: "labeler-labeler-role"}, &role); err != nil {
		t.Fatalf("the operator's role: %v", err)
	}

	t.Run("operator", func(t *testing.T) {
		e := labeler.Env(t)
		elsewhere := cp.Namespace(t)
		mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "settings"}}
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: "settings"}}
		for _, cm := range []*corev1.ConfigMap{mine, theirs} {
			if err := e.Create(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
		}
		e.Run(t)
		Eventually(t, func(ctx context.Context) error {
			if err := e.Get(ctx, client.ObjectKeyFromObject(mine), mine); err != nil {
				return err
			}
			if mine.Labels["labeled"] != "true" {
				return fmt.Errorf("not labeled; requests so far:\n%s", &e.Requests)
			}
			return nil
		})
		if n := e.Requests.Count("patch", "configmaps"); n != 1 {
			t.Errorf("%d patches of configmaps, want 1:\n%s", n, &e.Requests)
		}
		// The operator's watch is of its namespace alone, so a second later the other
		// ConfigMap is still as it was.
		time.Sleep(time.Second)
		if err := e.Get(t.Context(), client.ObjectKeyFromObject(theirs), theirs); err != nil {
			t.Fatal(err)
		}
		if theirs.Labels["labeled"] != "" {
			t.Errorf("the operator labeled a ConfigMap of namespace %s, outside the test's", elsewhere)
		}
	})

	if err := labeler.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Get(t.Context(), client.ObjectKey{Name: role.Name}, &role); !apierrors.IsNotFound(err) {
		t.Errorf("after Stop, getting the operator's role: %v, want not found", err)
	}
	if err := admin.List(t.Context(), &corev1.NamespaceList{}); err != nil {
		t.Errorf("the shared control plane stopped with the operator: %v", err)
	}
}
