package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	rkreconcile "github.com/reconcilekit/reconcilekit/reconcile"

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
	op := &Operator{User: "labeler", Role: "testdata/role.yaml", Controllers: []rkreconcile.Declaration{labeler}, ControlPlane: cp}
	if err := op.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() }) // a second Stop does nothing
	admin := cp.Client(t, nil)
	var role rbacv1.ClusterRole
	if err := admin.Get(t.Context(), client.ObjectKey{Name: "labeler-labeler-role"}, &role); err != nil {
		t.Fatalf("the operator's role: %v", err)
	}

	t.Run("operator", func(t *testing.T) {
		e := op.Env(t)
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

	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Get(t.Context(), client.ObjectKey{Name: role.Name}, &role); !apierrors.IsNotFound(err) {
		t.Errorf("after Stop, getting the operator's role: %v, want not found", err)
	}
	if err := admin.List(t.Context(), &corev1.NamespaceList{}); err != nil {
		t.Errorf("the shared control plane stopped with the operator: %v", err)
	}
}

// A test of an operator fails within seconds, and says why, when what it waits for cannot
// happen: a request the operator's role does not grant (here a cache's list of
// ConfigMaps, which would otherwise time out after two minutes) names the verb, the
// resource, the user and the marker to add; a wait for a controller that does not exist
// names the controllers that do. The failing test runs against a recording testing.TB,
// on a goroutine of its own as testing runs a test.
func TestAnOperatorsTestFailsFastAndNamesTheCause(t *testing.T) {
	cp := cluster(t)
	// A role that lets the labeler read a ConfigMap by name, but not list or watch them.
	getOnly := filepath.Join(t.TempDir(), "role.yaml")
	role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: get-only\n" +
		"rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, patch]\n"
	if err := os.WriteFile(getOnly, []byte(role), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		user string
		role string
		wait func(tb testing.TB, e *Env, m *Manager) // what the failing test waits for
		want []string                                // what its failure says
	}{
		{
			name: "a request the role does not grant",
			user: "forgetful", role: getOnly,
			wait: func(tb testing.TB, e *Env, _ *Manager) {
				Eventually(tb, func(ctx context.Context) error {
					var cm corev1.ConfigMap
					if err := e.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: "settings"}, &cm); err != nil {
						return err
					}
					return errors.New("never labeled")
				})
			},
			want: []string{`User "forgetful" cannot`, `resource "configmaps" in API group ""`, "forbidden",
				`// +kubebuilder:rbac:groups="",resources=configmaps,verbs=list;watch`},
		},
		{
			name: "a wait for a controller that does not exist",
			user: "labeler", role: "testdata/role.yaml",
			wait: func(_ testing.TB, _ *Env, m *Manager) { m.AwaitReconciles("labeller", 1) },
			want: []string{`no controller is named "labeller"`, "configmap"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &Operator{User: tc.user, Role: tc.role, Controllers: []rkreconcile.Declaration{labeler}, ControlPlane: cp}
			if err := op.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = op.Stop() })
			rec := &recordingTB{TB: t}
			e := op.Env(rec)
			settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "settings"}}
			if err := e.Create(t.Context(), settings); err != nil {
				t.Fatal(err)
			}

			start := time.Now()
			done := make(chan struct{})
			go func() {
				defer close(done)
				tc.wait(rec, e, e.Run(rec))
			}()
			<-done
			took := time.Since(start)

			report := rec.String()
			t.Logf("the failing test took %s and said:\n%s", took.Round(time.Millisecond), report)
			if !rec.stopped {
				t.Errorf("the test went on; want it stopped with Fatal")
			}
			if took > 10*time.Second {
				t.Errorf("the test failed after %s, want under 10s", took.Round(time.Millisecond))
			}
			for _, w := range tc.want {
				if !strings.Contains(report, w) {
					t.Errorf("the failure does not say %q", w)
				}
			}
		})
	}
}

// recordingTB is a testing.TB whose failures are recorded rather than reported: Fatal
// records and ends the goroutine, as testing's does.
type recordingTB struct {
	testing.TB

	mu      sync.Mutex
	lines   []string
	stopped bool
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recordingTB) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func (r *recordingTB) FailNow() { r.Fatalf("FailNow") }

func (r *recordingTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lines) > 0
}

func (r *recordingTB) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}
