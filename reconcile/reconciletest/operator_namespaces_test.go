package reconciletest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rkreconcile "github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// copier copies the ConfigMap named settings into the namespace its data names under
// "to": reading the copy from its cache first if its data says "how: read", writing it
// blindly otherwise.
var copier = rkreconcile.For(&corev1.ConfigMap{}, rkreconcile.LogicFunc[*corev1.ConfigMap](
	func(ctx context.Context, cm *corev1.ConfigMap, s rkreconcile.Scope) requeue.Outcome {
		if cm.Name != "settings" || cm.Data["to"] == "" {
			return requeue.Done()
		}
		copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Data["to"], Name: "copied"}, Data: map[string]string{"from": cm.Namespace}}
		if cm.Data["how"] == "read" {
			err := s.Client.Get(ctx, client.ObjectKeyFromObject(copied), &corev1.ConfigMap{})
			if !apierrors.IsNotFound(err) {
				return requeue.Retry(err) // nil: copied already
			}
		}
		if err := s.Client.Create(ctx, copied); client.IgnoreAlreadyExists(err) != nil {
			return requeue.Retry(err)
		}
		return requeue.Done()
	}), "copier")

// An operator that works in a namespace beside the test's sees it when the test names it
// in Env.Namespaces; without, its first read or write there fails the test at once,
// naming Env.Namespaces, rather than a wait for what never comes timing out.
func TestEnvNamespacesAreTheOperatorsToo(t *testing.T) {
	cp := StartAPIServer(t)
	role := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(role, []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: copier-role\n"+
		"rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [create, get, list, patch, watch]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	op := &Operator{User: "copier", Role: role, Controllers: []rkreconcile.Declaration{copier}, ControlPlane: cp}
	if err := op.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })

	for _, tc := range []struct {
		name       string
		how        string
		namespaces func(other string) []string
		want       []string // what the failure says; none: the copy is made
	}{
		{name: "a namespace named is watched", how: "read", namespaces: func(other string) []string { return []string{other} }},
		{name: "every namespace is watched", how: "read", namespaces: func(string) []string { return []string{AllNamespaces} }},
		{name: "a write outside fails at once", how: "write", namespaces: func(string) []string { return nil },
			want: []string{"the operator wrote create configmaps in the namespace", "which its cache does not watch", "Env.Namespaces"}},
		{name: "a read outside fails at once", how: "read", namespaces: func(string) []string { return nil },
			want: []string{"the operator read its cache in a namespace the cache does not watch", "unknown namespace for the cache", "Env.Namespaces"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			e := op.Env(rec)
			other := cp.Namespace(t)
			e.Namespaces = tc.namespaces(other)
			settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "settings"}, Data: map[string]string{"to": other, "how": tc.how}}
			if err := e.Create(t.Context(), settings); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.Run(rec)
				Eventually(rec, func(ctx context.Context) error {
					var copied corev1.ConfigMap
					if err := e.Get(ctx, client.ObjectKey{Namespace: other, Name: "copied"}, &copied); err != nil {
						return err
					}
					if copied.Data["from"] != e.Namespace {
						return errors.New("copied from elsewhere")
					}
					return nil
				})
			}()
			<-done
			report := rec.String()
			if len(tc.want) == 0 {
				if report != "" {
					t.Errorf("the test failed:\n%s", report)
				}
				return
			}
			if !rec.stopped {
				t.Errorf("the test went on; want it stopped with Fatal")
			}
			for _, w := range tc.want {
				if !strings.Contains(report, w) {
					t.Errorf("the failure:\n%s\ndoes not say %q", report, w)
				}
			}
		})
	}
}
