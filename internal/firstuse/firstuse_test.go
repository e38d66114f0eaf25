package firstuse_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// An example is an example operator: a directory under examples/ with a kubebuilder
// PROJECT file.
type example struct {
	name  string // the directory's name, and EXAMPLE in the Makefile
	group string // the API group, without the domain example.com
}

// examples returns the example operators of the checkout in root.
func examples(t *testing.T, root string) []example {
	t.Helper()
	projects, err := filepath.Glob(filepath.Join(root, "examples", "*", "PROJECT"))
	if err != nil || len(projects) == 0 {
		t.Fatalf("no examples/*/PROJECT in %s (%v)", root, err)
	}
	var list []example
	for _, project := range projects {
		data, err := os.ReadFile(project)
		if err != nil {
			t.Fatal(err)
		}
		_, group, ok := strings.Cut(string(data), "\n  group: ")
		if !ok {
			t.Fatalf("%s names no API group", project)
		}
		group, _, _ = strings.Cut(group, "\n")
		list = append(list, example{name: filepath.Base(filepath.Dir(project)), group: strings.TrimSpace(group)})
	}
	return list
}

// checkout returns the root of this checkout, the module this package belongs to.
func checkout(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the checkout's go.mod: %v", err)
	}
	return root
}

// offlineModules fills the module cache, once per test binary, with what the new modules
// below read when the cache is their only proxy: the source of every module the checkout's
// packages need, and the go.mod file of every module version in its requirement graph,
// which minimal version selection reads. Building this package alone fetches neither all
// of the first nor the versions it does not select, so on a fresh machine the cache lacks
// them (github.com/davecgh/go-spew v1.1.1, which go-logr/zapr requires, say). Both come
// from the module proxy, as the checkout's own build did.
func offlineModules(t *testing.T, root string) {
	t.Helper()
	primeModules.Do(func() {
		// The library's module, the examples' (a module of their own), whose
		// requirements the templates copied from them need beyond the library's, and the
		// build tools', which a copy's make generate runs (controller-gen) with the
		// cache as its only proxy.
		for _, dir := range []string{root, filepath.Join(root, "examples"), filepath.Join(root, "hack", "tools")} {
			run(t, dir, goEnv, "go", "mod", "download")
			run(t, dir, goEnv, "go", "mod", "graph")
		}
	})
}

var primeModules sync.Once

// newoperator returns the path of cmd/newoperator of the checkout in root, built once per
// test binary into a directory TestMain removes: the tests that copy templates run at
// once, and each would otherwise link its own.
func newoperator(t *testing.T, root string) string {
	t.Helper()
	newoperatorOnce.Do(func() {
		path := filepath.Join(binDir, "newoperator")
		cmd := exec.Command("go", "build", "-o", path, "./cmd/newoperator")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), goEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			newoperatorErr = fmt.Errorf("go build ./cmd/newoperator: %v\n%s", err, out)
			return
		}
		newoperatorPath = path
	})
	if newoperatorErr != nil {
		t.Fatal(newoperatorErr)
	}
	return newoperatorPath
}

var (
	newoperatorOnce sync.Once
	newoperatorPath string
	newoperatorErr  error
	// binDir holds what the tests build once for all of them.
	binDir string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "firstuse")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs a command in dir, with env added to the test's environment, and returns its
// standard output. The test fails, with everything the command wrote, if it does. A
// command still running a minute before the test binary times out is killed, so that
// the failure shows its output rather than a goroutine dump; so is one that exits but
// leaves a process behind holding its output open, such as a control plane a test
// failed to stop.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Minute))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s (in %s): %v\n%s%s", strings.Join(cmd.Args, " "), dir, err, out, stderr.String())
	}
	return string(out)
}

// goEnv isolates the go command from the user's workspace and toolchain settings, so that
// what builds here builds for anyone.
var goEnv = []string{"GOWORK=off", "GOTOOLCHAIN=local"}

// goFlags let the go command add the requirements a new module lacks, as a user's first
// build would. -trimpath keeps the module cache's location out of what is compiled, so
// that the dependencies, compiled once, serve every test here and every later run, also
// from the module cache of its own that TestModuleInstallsWithGoGet uses.
const goFlags = "GOFLAGS=-mod=mod -modcacherw -trimpath"

// tool runs, in dir, one of the build tools that the checkout in root pins in hack/tools,
// as the Makefile does.
func tool(t *testing.T, root, dir string, args ...string) string {
	t.Helper()
	modfile := filepath.Join(root, "hack", "tools", "go.mod")
	return run(t, dir, goEnv, "go", append([]string{"tool", "-modfile=" + modfile}, args...)...)
}
