package firstuse_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// examples are the example operators, each with the API group it defines under example.com.
var examples = []struct{ name, group string }{
	{"memcached", "cache"},
	{"podset", "apps"},
	{"at", "cnat"},
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

// run runs a command in dir, with env added to the test's environment, and returns its
// standard output. The test fails, with everything the command wrote, if it does.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
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

// tool runs one of the build tools pinned in hack/tools, as the Makefile does.
func tool(t *testing.T, root, dir string, env []string, args ...string) string {
	t.Helper()
	modfile := filepath.Join(root, "hack", "tools", "go.mod")
	return run(t, dir, append(env, goEnv...), "go", append([]string{"tool", "-modfile=" + modfile}, args...)...)
}
