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

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/ownership"
	rkreconcile "github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/workload"
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
		Template: corev1.PodTemplateSpec{Spec: workload.Restricted(corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
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
	fasttier.Skip(t) // its runs start a control plane each
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

// A role that grants more than the operator uses fails the check Operator.Main runs once
// every test has passed, naming the marker lines to remove and to add: the verbs the
// operator used in the tests and those its declaration implies, never another.
func TestARoleThatGrantsMoreThanTheOperatorUsesNamesTheMarkers(t *testing.T) {
	cp := StartAPIServer(t)
	for _, tc := range []struct {
		name    string
		markers []string // beside the Backup operator's own
		want    string   // after the role's path
	}{{
		name:    "an extra verb",
		markers: []string{"// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete"},
		want: " is not what the operator does: it grants delete on jobs.batch, which the operator never used in these tests nor needs by its declaration.\n" +
			"Remove these markers:\n\tcontroller/rbac.go:8: // +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete\n" +
			"Add these markers among the controller's RBAC markers:\n\t// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create\n" +
			"then regenerate config/rbac/role.yaml (make generate)",
	}, {
		name: "a kind it never touches",
		markers: []string{"// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create",
			`// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list`},
		want: " is not what the operator does: it grants get, list on secrets, which the operator never used in these tests nor needs by its declaration.\n" +
			"Remove these markers:\n\tcontroller/rbac.go:9: // +kubebuilder:rbac:groups=\"\",resources=secrets,verbs=get;list\n" +
			"then regenerate config/rbac/role.yaml (make generate)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			markers := append([]string{
				`// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch`,
				`// +kubebuilder:rbac:groups="",resources=configmaps/finalizers,verbs=update`,
				"// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch",
			}, tc.markers...)
			source := "package controller\n\n// The Backup controller's permissions.\n\n" + strings.Join(markers, "\n") + "\n"
			role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules:\n"
			for _, m := range markers {
				body := strings.TrimPrefix(m, "// +kubebuilder:rbac:")
				var group, resource, verbs string
				for _, arg := range strings.Split(body, ",") {
					k, v, _ := strings.Cut(arg, "=")
					switch k {
					case "groups":
						group = v
					case "resources":
						resource = v
					case "verbs":
						verbs = strings.ReplaceAll(v, ";", ", ")
					}
				}
				role += fmt.Sprintf("- apiGroups: [%s]\n  resources: [%s]\n  verbs: [%s]\n", group, resource, verbs)
			}
			for path, data := range map[string]string{"controller/rbac.go": source, "config/rbac/role.yaml": role} {
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, path), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(root) // the markers are named by their path from the tests' directory
			op := &Operator{User: "backup", Role: filepath.Join("config", "rbac", "role.yaml"), ControlPlane: cp,
				Controllers: []rkreconcile.Declaration{rkreconcile.For(&corev1.ConfigMap{}, backup, "backup", rkreconcile.WithChildren(&batchv1.Job{}))}}
			if err := op.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = op.Stop() })
			start := time.Now()
			t.Run("the operator's test", func(t *testing.T) {
				e := op.Env(t)
				m := e.Run(t)
				if err := e.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "settings"}}); err != nil {
					t.Fatal(err)
				}
				Eventually(t, func(ctx context.Context) error {
					return e.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: "settings"}, &batchv1.Job{})
				})
				m.Stop()
			})
			err := op.CheckRole()
			t.Logf("after the operator's test, %.1f s after it started, the role check said:\n%v", time.Since(start).Seconds(), err)
			if err == nil || err.Error() != "reconciletest: the role of backup (config/rbac/role.yaml)"+tc.want {
				t.Errorf("the role check does not say\nreconciletest: the role of backup (config/rbac/role.yaml)%s", tc.want)
			}
		})
	}
}

// A table runs its cases under the operator's role when it names it: a verb the markers
// lack fails the case with the API server's refusal, where an administrator would pass.
func TestATableRunsUnderTheOperatorsRole(t *testing.T) {
	cp := StartAPIServer(t)
	for _, tc := range []struct {
		name, jobs string // the verbs the role grants on Jobs
		wantErr    string
	}{
		{name: "the role grants what the logic does", jobs: "get, list, watch, create"},
		{name: "the role lacks create", jobs: "get, list, watch", wantErr: `jobs.batch is forbidden: User "backup" cannot create resource "jobs" in API group "batch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The table reads uncached: get of the ConfigMap, which a manager's cache would serve.
			role := backupRole(t, tc.jobs)
			data, err := os.ReadFile(role)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(role, []byte(strings.Replace(string(data), "verbs: [list, watch]", "verbs: [get, list, watch]", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			table := ReconcilerTests{ControlPlane: cp, Role: role, User: "backup",
				Controller: rkreconcile.For(&corev1.ConfigMap{}, backup, "backup", rkreconcile.WithChildren(&batchv1.Job{}))}
			c := ReconcilerTestCase{
				Name:         "a ConfigMap named settings gets a Job",
				Object:       &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}},
				WantRequests: []string{"create jobs"},
			}
			rec := &recordingTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				table.RunCase(rec, c)
			}()
			<-done
			report := rec.String()
			if tc.wantErr == "" {
				if report != "" {
					t.Errorf("the case failed under the role:\n%s", report)
				}
				return
			}
			if !strings.Contains(report, tc.wantErr) {
				t.Errorf("the case's failure does not say %q:\n%s", tc.wantErr, report)
			}
		})
	}
}
