package explore_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// tenantOf is the namespace beside a run's that the copier writes into.
func tenantOf(namespace string) string { return "tenant-" + namespace }

// copier keeps, for the ConfigMap named settings, a copy in the namespace tenant-NAMESPACE:
// an operator that writes outside the namespace of what it reconciles.
var copier = reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](
	func(ctx context.Context, cm *corev1.ConfigMap, s reconcile.Scope) requeue.Outcome {
		if cm.Name != "settings" {
			return requeue.Done()
		}
		copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tenantOf(cm.Namespace), Name: "copied"}, Data: cm.Data}
		if err := s.Client.Get(ctx, client.ObjectKeyFromObject(copied), &corev1.ConfigMap{}); err == nil {
			return requeue.Done()
		} else if client.IgnoreNotFound(err) != nil {
			return requeue.Retry(err)
		}
		return requeue.Retry(client.IgnoreAlreadyExists(s.Client.Create(ctx, copied)))
	}), "copier")

// copierWorkload makes the tenant's namespace, then the settings the copier copies there,
// then deletes the settings.
func copierWorkload() []explore.Step {
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"tier": "gold"}}
	return []explore.Step{
		explore.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantOf(explore.Namespace)}}),
		explore.Create(settings),
		explore.Delete(settings),
	}
}

// startCopier starts the copier on an API server of its own, under a role of its
// configmaps alone, for the test.
func startCopier(t *testing.T) *reconciletest.Operator {
	t.Helper()
	role := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(role, []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: copier-role\n"+
		"rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [create, get, list, patch, watch]\n"+
		"- apiGroups: [events.k8s.io]\n  resources: [events]\n  verbs: [create, patch]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	op := &reconciletest.Operator{User: "copier", Role: role, Controllers: []reconcile.Declaration{copier},
		ControlPlane: reconciletest.StartAPIServer(t)}
	if err := op.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	return op
}

// childEnv marks the test binary run by TestExplorationNamespacesAreTheOperatorsToo to
// explore the copier without naming its namespace, and fail.
const childEnv = "EXPLORE_NAMESPACES_UNNAMED"

// An exploration's operator watches the namespaces Exploration.Namespaces names beside the
// run's, as Env.Namespaces has an Env's: one that writes into "tenant-{namespace}" is
// explored with no violation when Namespaces names it, and without, its first write there
// fails the exploration at once, naming Exploration.Namespaces, rather than each run
// waiting out the settle limit.
func TestExplorationNamespacesAreTheOperatorsToo(t *testing.T) {
	if testing.Short() {
		t.Skip("explores")
	}
	t.Run("named", func(t *testing.T) {
		rep := explore.Run(t, explore.Exploration{
			Operator:   startCopier(t),
			Namespaces: []string{tenantOf(explore.Namespace)},
			Workload:   copierWorkload(),
			Classes:    []explore.Class{explore.Crash},
			Budget:     1,
		})
		if rep.Runs < 2 {
			t.Errorf("%d runs; want the reference's and a crash's", rep.Runs)
		}
	})
	t.Run("not named", func(t *testing.T) {
		start := time.Now()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestExploringOutsideItsNamespaces$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		if err == nil {
			t.Fatalf("the exploration passed; want it failed:\n%s", out)
		}
		for _, want := range []string{"a namespace the cache does not watch", "explore.Exploration.Namespaces"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the failure does not say %q:\n%s", want, out)
			}
		}
		// The settle limit is 30 s a step: a failure within it came at once.
		if took > 30*time.Second {
			t.Errorf("the exploration failed after %s; want it at once", took.Round(time.Second))
		}
	})
}

// TestExploringOutsideItsNamespaces is the exploration TestExplorationNamespacesAreTheOperatorsToo
// expects to fail: it runs only in the test binary that test starts.
func TestExploringOutsideItsNamespaces(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestExplorationNamespacesAreTheOperatorsToo")
	}
	explore.Run(t, explore.Exploration{
		Operator: startCopier(t),
		Workload: copierWorkload(),
		Classes:  []explore.Class{explore.Crash},
		Budget:   1,
	})
}
