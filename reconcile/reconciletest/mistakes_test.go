package reconciletest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
	rkreconcile "github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// mistakeEnv makes TestANewUsersMistakeIsTheFirstThingPrinted the test that makes the
// mistake it names, in a test binary of its own, as a new user's test would.
const mistakeEnv = "RECONCILETEST_MISTAKE"

// backup is a Backup operator in miniature: for the ConfigMap named settings, a Job of
// its name, written with ownership.Ensure.
var backup = rkreconcile.LogicFunc[*corev1.ConfigMap](func(ctx context.Context, cm *corev1.ConfigMap, s rkreconcile.Scope) requeue.Outcome {
	if cm.Name != "settings" {
		return requeue.Done()
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: ownership.Restricted(corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "backup", Image: "busybox"}}}, 1001)}}}
	if _, _, err := ownership.Ensure(ctx, s.Writer, cm, job); err != nil {
		return requeue.Retry(err)
	}
	return requeue.Done()
})

// backupRole is the Backup operator's role: what its markers would generate, with the
// verbs given on Jobs.
func backupRole(t testing.TB, jobs string) string {
	t.Helper()
	role := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: role
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [configmaps/finalizers]
  verbs: [update]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [` + jobs + `]
`
	path := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(path, []byte(role), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The mistakes a new user makes in an operator's declaration or markers, each made by a
// test of its own in a test binary of its own: the test fails, and the first thing it
// prints is the cause with its fix, before any log of the manager and with no stack
// trace. How long the message takes to appear, control plane start included, is logged.
func TestANewUsersMistakeIsTheFirstThingPrinted(t *testing.T) {
	mistakes := []struct {
		name     string
		children []rkreconcile.Option // the declaration's
		jobs     string               // the verbs the role grants on Jobs
		want     string               // the first line printed, or its beginning
		fix      string               // what the report goes on to say
		fix2     string               // and then
	}{{
		name: "no WithChildren", jobs: "list, watch, create, patch",
		want: "reconciletest: the operator's declaration does not own a kind its logic writes, so the manager would not watch it: " +
			"ownership: Job settings is of a kind the controller does not own (it owns none): declare it, so that its changes are watched and it is cached: reconcile.WithChildren(&batchv1.Job{})",
	}, {
		name: "a wrong child kind", children: []rkreconcile.Option{rkreconcile.WithChildren(&corev1.Pod{})}, jobs: "list, watch, create, patch",
		want: `reconciletest: the API server refused the operator a request, forbidden: User "backup" cannot `, // list or watch, whichever comes first
		fix:  `resource "pods" in API group ""` + " in the namespace " /* the test's */ + "",
		fix2: "Its role lacks list, watch on pods, of the verbs the manager's cache needs (list, watch).\n" +
			"Its markers grant nothing on pods, which the declaration owns, and let it write what the declaration does not own: if those are the controller's children, declare them instead, and the role needs nothing more:\n" +
			"\treconcile.WithChildren(&batchv1.Job{})\n" +
			"Otherwise, if it does own pods, grant it with this marker among the controller's RBAC markers, then regenerate config/rbac/role.yaml:\n" +
			"\t// +kubebuilder:rbac:groups=\"\",resources=pods,verbs=list;watch\n",
	}, {
		name: "a missing verb", children: []rkreconcile.Option{rkreconcile.WithChildren(&batchv1.Job{})}, jobs: "list, watch, patch",
		want: `reconciletest: the API server refused the operator a request, forbidden: User "backup" cannot create resource "jobs" in API group "batch"`,
		fix:  "Its role lacks create on jobs. Grant it all with this marker among the controller's RBAC markers, then regenerate config/rbac/role.yaml:\n\t// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=create\n",
	}}
	if name := os.Getenv(mistakeEnv); name != "" {
		for _, m := range mistakes {
			if m.name == name {
				makeMistake(t, rkreconcile.For(&corev1.ConfigMap{}, backup, "backup", m.children...), backupRole(t, m.jobs))
			}
		}
		return
	}
	for _, m := range mistakes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestANewUsersMistakeIsTheFirstThingPrinted$", "-test.count=1")
			cmd.Env = append(os.Environ(), mistakeEnv+"="+m.name)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var lines []string
			var first time.Duration
			scanner := bufio.NewScanner(out)
			for scanner.Scan() {
				if len(lines) == 0 {
					first = time.Since(start)
				}
				lines = append(lines, scanner.Text())
			}
			var exit *exec.ExitError
			if err := cmd.Wait(); !errors.As(err, &exit) {
				t.Errorf("the test that makes the mistake ended with %v; want it failed", err)
			}
			printed := strings.Join(lines, "\n")
			t.Logf("the first line appeared %.1f s after the test binary started (its control plane's start included), the test ended after %.1f s:\n%s",
				first.Seconds(), time.Since(start).Seconds(), printed)
			if len(lines) == 0 || !strings.HasPrefix(lines[0], m.want) {
				t.Errorf("the first line printed is not the cause; want it to begin\n%s", m.want)
			}
			for _, fix := range []string{m.fix, m.fix2} {
				if !strings.Contains(printed+"\n", fix) {
					t.Errorf("the report does not say\n%s", fix)
				}
			}
			if strings.Contains(printed, "goroutine ") || strings.Contains(printed, "controller-runtime/pkg/internal/controller.(*Controller") {
				t.Errorf("a stack trace was printed")
			}
		})
	}
}

// makeMistake runs the operator declared as d under the role of path, as a new user's
// test would: it creates the ConfigMap settings and waits for the Job settings.
func makeMistake(t *testing.T, d rkreconcile.Declaration, path string) {
	op := &Operator{User: "backup", Role: path, Controllers: []rkreconcile.Declaration{d}}
	if err := op.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	e := op.Env(t)
	e.Run(t)
	if err := e.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, func(ctx context.Context) error {
		return e.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: "settings"}, &batchv1.Job{})
	})
	t.Error(fmt.Errorf("the Job was created"))
}
