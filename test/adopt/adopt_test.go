// Package adopt proves that a project kubebuilder scaffolded adopts the library one
// controller at a time (docs/adopting.md), and that kubebuilder create api works on it
// afterwards and on every template cmd/newoperator makes.
//
// The test builds kubebuilder through the Go module proxy once, into the user cache
// directory (reconcilekit/tools), as the control plane is cached; everything else it needs
// is the control-plane binaries (KUBEBUILDER_ASSETS, make controlplane) and the modules the
// scaffold requires, from the module cache or the proxy.
package adopt

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func init() {
	// The API server's start logs through controller-runtime; the manager under test logs
	// to its own output.
	log.SetLogger(logr.Discard())
}

// kubebuilderVersion is the kubebuilder the test scaffolds with.
const kubebuilderVersion = "v4.16.0"

// TestKubebuilderProjectAdoptsOneController scaffolds a project with kubebuilder (init,
// then create api for two kinds, Widget and Gadget), adopts the Widget controller by
// replacing its file (reconcile.Adopt, the scaffold's Reconcile and SetupWithManager kept),
// giving its type the conditions' two methods and adding a test of it under its role
// (reconciletest.Operator), and then:
//   - the scaffold's own make test passes, with the one change of its Makefile
//     docs/adopting.md gives (the control plane's binaries in KUBEBUILDER_ASSETS), and
//     without the ConfigMaps marker of the adopted controller it fails, naming that marker;
//   - the scaffold's main, unedited (its health checks, metrics filters, webhook server,
//     leader election flag), runs the adopted controller beside the plain Gadget one:
//     /readyz passes with the scaffold's check and the declaration's, the Widget gets its
//     ConfigMap, and both controllers reconcile;
//   - with the one edit of main docs/adopting.md states, the manager made by
//     reconcile.Manager, the same holds, the scaffold's health checks unedited;
//   - kubebuilder create api adds a third kind to the adopted project, whose controller is
//     adopted as the Widget's was: the two adopted controllers of the package build and
//     vet side by side.
//
// Each step logs how long it took.
func TestKubebuilderProjectAdoptsOneController(t *testing.T) {
	reconciletest.SkipShort(t)
	env := newEnv(t)
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env.step(t, "kubebuilder init", dir, env.kubebuilder, "init", "--domain", "example.com", "--repo", "example.com/shop")
	for _, kind := range []string{"Widget", "Gadget"} {
		env.step(t, "kubebuilder create api "+kind, dir, env.kubebuilder, "create", "api", "--group", "shop", "--version", "v1", "--kind", kind, "--resource", "--controller")
	}

	// The adoption: the Widget controller's file, two methods of its type, and a test of
	// the controller under its role.
	copyFile(t, "testdata/adopted/widget_controller.go", filepath.Join(dir, "internal/controller/widget_controller.go"))
	copyFile(t, "testdata/adopted/widget_conditions.go", filepath.Join(dir, "api/v1/widget_conditions.go"))
	copyFile(t, "testdata/adopted/widget_role_test.go", filepath.Join(dir, "internal/controller/widget_role_test.go"))
	env.requireLibrary(t, dir)
	testsOnAssets(t, filepath.Join(dir, "Makefile"))

	// The scaffold's own make test: manifests, generate, fmt, vet, then its tests (its
	// envtest suite, which calls WidgetReconciler.Reconcile, and the role's test).
	env.step(t, "make test", dir, "make", "test")

	// Without the marker that grants the ConfigMaps, make test fails and says which line to
	// add: the refusal of the operator's list of ConfigMaps, as its role alone allows.
	controllerFile := filepath.Join(dir, "internal/controller/widget_controller.go")
	const configMaps = `// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch`
	adopted := readFile(t, controllerFile)
	writeFile(t, controllerFile, strings.Replace(adopted, configMaps+"\n", "", 1))
	out := env.fails(t, "make test without the ConfigMaps marker", dir, "make", "test")
	want := `// +kubebuilder:rbac:groups="",resources=configmaps,verbs=`
	_, report, named := strings.Cut(out, "reconciletest: the API server refused")
	if !named || !strings.Contains(report, want) {
		t.Fatalf("make test without the ConfigMaps marker failed without naming the marker to add (%s...):\n%s", want, out)
	}
	if strings.Contains(report, "reconcile.WithChildren(") {
		t.Errorf("make test without the ConfigMaps marker proposed to declare a child, where the marker is what is missing:\n%s", out)
	}
	t.Logf("it said: reconciletest: the API server refused%s", firstLines(report, 3))
	writeFile(t, controllerFile, adopted)
	env.step(t, "make manifests", dir, "make", "manifests")

	env.step(t, "go build ./cmd", dir, "go", "build", "-o", "bin/manager", "./cmd")
	runManager(t, filepath.Join(dir, "bin/manager"), filepath.Join(dir, "config/crd/bases"), "[+]readyz ok", "[+]controller-widget ok")

	// The other path: the manager made by reconcile.Manager, the one edit of main that
	// docs/adopting.md states; the scaffold's health checks stay as they are.
	managerMade(t, filepath.Join(dir, "cmd/main.go"))
	env.step(t, "go build ./cmd, made by reconcile.Manager", dir, "go", "build", "-o", "bin/manager", "./cmd")
	runManager(t, filepath.Join(dir, "bin/manager"), filepath.Join(dir, "config/crd/bases"), "[+]readyz ok", "[+]controllers ok")

	// A third kind, its controller adopted as the Widget's was: two adopted controllers in
	// one package, each with its logic named configure.
	env.step(t, "kubebuilder create api after adoption", dir, env.kubebuilder, "create", "api", "--group", "shop", "--version", "v1", "--kind", "Sprocket", "--resource", "--controller")
	copyFile(t, "testdata/adopted/sprocket_controller.go", filepath.Join(dir, "internal/controller/sprocket_controller.go"))
	copyFile(t, "testdata/adopted/sprocket_conditions.go", filepath.Join(dir, "api/v1/sprocket_conditions.go"))
	env.step(t, "go vet with two adopted controllers", dir, "go", "vet", "./...")
}

// makefileTestTarget is the test target of the Makefile kubebuilder v4.16.0 scaffolds, and
// makefileTestOnAssets the one change docs/adopting.md gives it: the tests run on the
// binaries KUBEBUILDER_ASSETS names when it is set, with no setup-envtest (whose version
// the Makefile derives from controller-runtime's, v0.25.2 once the library is required,
// a version setup-envtest does not have).
const (
	makefileTestTarget = `test: manifests generate fmt vet setup-envtest ## Run tests.
	KUBEBUILDER_ASSETS="$(shell "$(ENVTEST)" use $(ENVTEST_K8S_VERSION) --bin-dir "$(LOCALBIN)" -p path)" go test $$(go list ./... | grep -v /e2e) -coverprofile cover.out
`
	makefileTestOnAssets = `test: manifests generate fmt vet $(if $(KUBEBUILDER_ASSETS),,setup-envtest) ## Run tests, on the binaries in KUBEBUILDER_ASSETS when set.
	KUBEBUILDER_ASSETS="$(or $(KUBEBUILDER_ASSETS),$(shell "$(ENVTEST)" use $(ENVTEST_K8S_VERSION) --bin-dir "$(LOCALBIN)" -p path))" go test $$(go list ./... | grep -v /e2e) -coverprofile cover.out
`
)

// testsOnAssets makes the change of docs/adopting.md to the scaffold's Makefile at path.
func testsOnAssets(t *testing.T, path string) {
	t.Helper()
	src := readFile(t, path)
	if n := strings.Count(src, makefileTestTarget); n != 1 {
		t.Fatalf("the scaffold's Makefile has %d of the test target\n%s\nwant one: has kubebuilder's scaffold changed?", n, makefileTestTarget)
	}
	writeFile(t, path, strings.Replace(src, makefileTestTarget, makefileTestOnAssets, 1))
}

// TestKubebuilderCreateAPIWorksOnEveryTemplate makes a new operator from each template
// cmd/newoperator offers, adds a second kind to its API group with kubebuilder create api,
// then turns the project multigroup (kubebuilder edit --multigroup=true, which reads the
// template's Dockerfile) and adds a kind of another group, and builds and vets the result,
// whose CRDs are the three kinds'.
func TestKubebuilderCreateAPIWorksOnEveryTemplate(t *testing.T) {
	fasttier.SkipModuleBuild(t) // a project of each template, kubebuilder run on it
	env := newEnv(t)
	newoperator := filepath.Join(t.TempDir(), "newoperator")
	env.run(t, env.root, "go", "build", "-o", newoperator, "./cmd/newoperator")
	for _, tt := range []struct{ template, group, kind, version string }{
		{"minimal", "cache.acme.io", "Redis", "v1alpha1"},  // plural redises, where controller-gen would guess redis
		{"memcached", "cache.acme.io", "Redis", "v1beta1"}, // the version it reconciles
		{"podset", "apps.acme.io", "Fleet", "v1alpha1"},
		{"at", "chores.acme.io", "Errand", "v1alpha1"},
		{"keyval", "vault.acme.io", "Ledger", "v1alpha1"},
		{"cronjob", "ops.acme.io", "Snapshot", "v1"},
	} {
		t.Run(tt.template, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "operator")
			env.run(t, env.root, newoperator, "-from", tt.template, "-module", "example.com/acme/"+strings.ToLower(tt.kind)+"-operator",
				"-group", tt.group, "-kind", tt.kind, "-dir", dir)
			group, _, _ := strings.Cut(tt.group, ".")
			env.step(t, "kubebuilder create api", dir, env.kubebuilder, "create", "api", "--group", group, "--version", tt.version, "--kind", "Backup", "--resource", "--controller")
			env.step(t, "kubebuilder edit --multigroup=true", dir, env.kubebuilder, "edit", "--multigroup=true")
			env.step(t, "kubebuilder create api --group other", dir, env.kubebuilder, "create", "api", "--group", "other", "--version", "v1", "--kind", "Tape", "--resource", "--controller")
			env.step(t, "go vet", dir, "go", "vet", "./...")
			// create api regenerates the CRDs: the template's kind's, under its own plural,
			// and the two new ones', no other.
			crds, err := filepath.Glob(filepath.Join(dir, "config/crd/bases/*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if len(crds) != 3 {
				t.Errorf("after create api twice, config/crd/bases holds %d CRDs, want 3 (%s's, Backup's and Tape's): %v", len(crds), tt.kind, crds)
			}
			project, err := os.ReadFile(filepath.Join(dir, "PROJECT"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(project), "multigroup: true") {
				t.Errorf("after kubebuilder edit --multigroup=true, PROJECT does not say multigroup: true:\n%s", project)
			}
		})
	}
}

// env is what the test's commands run with.
type env struct {
	root        string   // the checkout
	kubebuilder string   // its path
	vars        []string // the commands' environment
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{root: root}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(cache, "reconcilekit", "tools", "kubebuilder-"+kubebuilderVersion)
	e.kubebuilder = filepath.Join(tools, "kubebuilder")
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" { // as the Makefile finds them
		out, err := exec.Command(filepath.Join(root, "hack/controlplane/build.sh"), "--dir").Output()
		if err != nil {
			t.Fatalf("finding the control-plane binaries (make controlplane): %v", err)
		}
		assets = strings.TrimSpace(string(out))
	}
	e.vars = append(os.Environ(),
		"KUBEBUILDER_ASSETS="+assets,
		// The scaffold's Makefile installs controller-gen into LOCALBIN: cached beside
		// kubebuilder rather than made again for every project.
		"LOCALBIN="+filepath.Join(tools, "bin"),
		"GOWORK=off",
		// An environment of make's own, not that of a make running these tests.
		"MAKEFLAGS=", "MAKELEVEL=", "MFLAGS=",
	)
	if _, err := os.Stat(e.kubebuilder); err != nil {
		e.step(t, "go install kubebuilder "+kubebuilderVersion, root, "go", "install", "sigs.k8s.io/kubebuilder/v4@"+kubebuilderVersion)
	}
	return e
}

// run runs name in dir and returns its standard output, failing the test with all it
// printed if it fails.
func (e *env) run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	if name == "go" && len(args) > 0 && args[0] == "install" {
		cmd.Env = append(cmd.Env, "GOBIN="+filepath.Dir(e.kubebuilder))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s%s", name, strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// fails runs a command that must fail, in dir, and returns all it printed, failing the
// test if it succeeds; it logs how long it took.
func (e *env) fails(t *testing.T, what, dir, name string, args ...string) string {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s: %s %s (in %s) succeeded; want it to fail:\n%s", what, name, strings.Join(args, " "), dir, out)
	}
	t.Logf("%s: failed as it should, %.1fs", what, time.Since(start).Seconds())
	return string(out)
}

// step runs a command as run does, and logs how long it took.
func (e *env) step(t *testing.T, what, dir, name string, args ...string) {
	t.Helper()
	start := time.Now()
	e.run(t, dir, name, args...)
	t.Logf("%s: %.1fs", what, time.Since(start).Seconds())
}

// requireLibrary makes the project require this checkout of the library, and the
// versions of controller-runtime and client-go it builds with, which may be newer than
// those the scaffold pinned.
func (e *env) requireLibrary(t *testing.T, dir string) {
	t.Helper()
	start := time.Now()
	edits := []string{"mod", "edit",
		"-require=github.com/reconcilekit/reconcilekit@v0.0.0-00010101000000-000000000000",
		"-replace=github.com/reconcilekit/reconcilekit=" + e.root}
	for _, module := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go"} {
		version := strings.TrimSpace(e.run(t, e.root, "go", "list", "-m", "-f", "{{.Version}}", module))
		edits = append(edits, "-require="+module+"@"+version)
	}
	e.run(t, dir, "go", edits...)
	e.run(t, dir, "go", "mod", "tidy")
	t.Logf("requiring the library: %.1fs", time.Since(start).Seconds())
}

// runManager runs the scaffold's manager, built at bin, against an API server of its
// own serving the CRDs of crds, until the test ends: /readyz passes, listing each of ready
// (the scaffold's check and the declaration's); the adopted controller makes a Widget's ConfigMap; and
// both the adopted and the plain controller reconcile.
func runManager(t *testing.T, bin, crds string, ready ...string) {
	start := time.Now()
	cp := reconciletest.StartAPIServer(t, crds)
	ns := cp.Namespace(t)
	kubeconfig, err := cp.KubeConfig(ns)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	probes, metrics, webhooks := reconciletest.FreeAddress(t), reconciletest.FreeAddress(t), reconciletest.FreeAddress(t)
	_, webhookPort, _ := strings.Cut(webhooks, ":")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--health-probe-bind-address="+probes,
		"--metrics-bind-address="+metrics, "--metrics-secure=false", "--webhook-port="+webhookPort)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the manager's log:\n%s", logs.String())
		}
	})

	c := cp.Client(t, nil)
	for _, kind := range []string{"Widget", "Gadget"} {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "shop.example.com", Version: "v1", Kind: kind})
		obj.SetNamespace(ns)
		obj.SetName("first")
		obj.Object["spec"] = map[string]any{}
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	reconciletest.Eventually(t, get("http://"+probes+"/readyz?verbose", ready...))
	reconciletest.Eventually(t, get("http://"+probes+"/healthz", "ok"))
	reconciletest.Eventually(t, func(ctx context.Context) error {
		cm := &unstructured.Unstructured{}
		cm.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first-config"}, cm); err != nil {
			return fmt.Errorf("the adopted controller's ConfigMap: %w", err)
		}
		if owners := cm.GetOwnerReferences(); len(owners) != 1 || owners[0].Kind != "Widget" {
			t.Fatalf("the Widget's ConfigMap is owned by %v; want the Widget", owners)
		}
		return nil
	})
	for _, controller := range []string{"widget", "gadget"} {
		reconciletest.Eventually(t, get("http://"+metrics+"/metrics", fmt.Sprintf(`controller_runtime_reconcile_total{controller=%q,result="success"}`, controller)))
	}
	t.Logf("the scaffold's manager, adopted controller beside the plain one: %.1fs", time.Since(start).Seconds())
}

// managerMade makes the scaffold's main at path make its manager with reconcile.Manager,
// the Widget declaration listed, rather than with ctrl.NewManager and the Widget's
// SetupWithManager: the one edit docs/adopting.md states.
func managerMade(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for _, edit := range []struct{ old, new string }{
		{"mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{",
			"mgr, err := reconcile.Manager{Controllers: []reconcile.Declaration{controller.Widgets.Declaration()}, Options: ctrl.Options{"},
		{"\t})\n\tif err != nil {\n\t\tsetupLog.Error(err, \"Failed to start manager\")",
			"\t}}.New(ctrl.GetConfigOrDie())\n\tif err != nil {\n\t\tsetupLog.Error(err, \"Failed to start manager\")"},
		{"\t// +kubebuilder:scaffold:imports", "\t\"github.com/reconcilekit/reconcilekit/reconcile\"\n\t// +kubebuilder:scaffold:imports"},
	} {
		if strings.Count(src, edit.old) != 1 {
			t.Fatalf("the scaffold's main has %d of %q; want one: has kubebuilder's scaffold changed?", strings.Count(src, edit.old), edit.old)
		}
		src = strings.Replace(src, edit.old, edit.new, 1)
	}
	setup := regexp.MustCompile(`(?s)\tif err := \(&controller\.WidgetReconciler\{.*?os\.Exit\(1\)\n\t\}\n`)
	if len(setup.FindAllString(src, -1)) != 1 {
		t.Fatal("the scaffold's main does not set the Widget controller up once: has kubebuilder's scaffold changed?")
	}
	src = setup.ReplaceAllString(src, "")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// get returns a condition that holds once GET url answers 200 with each of want.
func get(url string, want ...string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, body)
		}
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				return fmt.Errorf("%s answered without %q: %s", url, w, firstLines(string(body), 20))
			}
		}
		return nil
	}
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// readFile returns the content of the file at path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// writeFile writes content to the file at path.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies the file src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a buffer a process's two outputs write to at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
