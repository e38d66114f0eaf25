package firstuse_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// The program that starts an operator needs no checkout, as a user runs it: go run
// .../cmd/newoperator@version, fetched from a module proxy that serves this checkout
// packed as that version, makes an operator in a directory outside any checkout from the
// templates inside it. The operator requires that version, with no replace directive, and
// after go mod tidy, as the program says to run, it builds and vets against the library
// fetched from the same proxy.
func TestGoRunAtAVersionMakesAnOperatorOutsideACheckout(t *testing.T) {
	fasttier.SkipModuleBuild(t)
	root := checkout(t)
	offlineModules(t, root)
	const version = "v0.99.0"
	proxy := t.TempDir()
	serveModule(t, proxy, root, version)

	// The dependencies come from the module cache, served as a proxy too, so that the test
	// needs no network; whatever it lacks, from the proxy the user's go command uses. A
	// module cache of its own keeps the made-up release out of the user's, where a later
	// run would find it and not fetch this checkout's. The made-up release is in no
	// checksum database; the rest is pinned by the go.sum the copy starts from.
	cache := strings.TrimSpace(run(t, root, goEnv, "go", "env", "GOMODCACHE"))
	usual := strings.TrimSpace(run(t, root, goEnv, "go", "env", "GOPROXY"))
	env := append([]string{
		"GOPROXY=" + fileURL(proxy) + "," + fileURL(filepath.Join(cache, "cache", "download")) + "," + usual,
		"GOMODCACHE=" + filepath.Join(t.TempDir(), "mod"),
		"GONOSUMDB=" + modulePath, "GOPRIVATE=", "GONOPROXY=",
	}, goEnv...)

	home := t.TempDir()
	if rel, err := filepath.Rel(root, home); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the temporary directory %s is inside the checkout %s", home, root)
	}
	out := run(t, home, append([]string{"GOFLAGS=-modcacherw -trimpath"}, env...), "go", "run",
		modulePath+"/cmd/newoperator@"+version,
		"-from", "memcached", "-module", "example.com/foo", "-group", "foo.example.com", "-kind", "Foo")
	t.Log(out)
	dir := filepath.Join(home, "foo")
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "require " + modulePath + " " + version + "\n"; !strings.Contains(string(mod), want) || strings.Contains(string(mod), "replace") {
		t.Fatalf("go.mod of the copy does not require %s %s alone:\n%s", modulePath, version, mod)
	}
	if _, err := os.Stat(filepath.Join(dir, "api", "v1beta1", "foo_types.go")); err != nil {
		t.Errorf("the copy has no renamed API: %v", err)
	}

	env = append(env, goFlags)
	run(t, dir, env, "go", "mod", "tidy")
	run(t, dir, env, "go", "build", "./...")
	run(t, dir, env, "go", "vet", "./...")
}
