package firstuse_test

import (
	"archive/zip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// modulePath is the path the library is installed by.
const modulePath = "github.com/reconcilekit/reconcilekit"

// The library installs with go get and nothing else: this checkout, packed as a release
// and served by a module proxy on disk, is fetched into a new module with no replace
// directive, and a program that uses its packages builds and runs.
func TestModuleInstallsWithGoGet(t *testing.T) {
	fasttier.SkipModuleBuild(t)
	root := checkout(t)
	offlineModules(t, root)
	const version = "v0.1.0"
	proxy := t.TempDir()
	serveModule(t, proxy, root, version)

	// The dependencies come from the module cache, served as a proxy too, so that the test
	// needs no network. A module cache of its own keeps the made-up release out of the
	// user's.
	cache := strings.TrimSpace(run(t, root, goEnv, "go", "env", "GOMODCACHE"))
	env := append([]string{
		"GOPROXY=" + fileURL(proxy) + "," + fileURL(filepath.Join(cache, "cache", "download")),
		"GOMODCACHE=" + filepath.Join(t.TempDir(), "mod"),
		"GOSUMDB=off",
		goFlags,
	}, goEnv...)

	app := t.TempDir()
	copyTree(t, filepath.Join("testdata", "hello"), app)
	write(t, filepath.Join(app, "go.mod"), "module example.com/hello\n\ngo 1.26.0\n")
	run(t, app, env, "go", "get", modulePath+"@"+version)
	run(t, app, env, "go", "build", "-o", "hello", ".")
	if mod, err := os.ReadFile(filepath.Join(app, "go.mod")); err != nil || strings.Contains(string(mod), "replace") {
		t.Fatalf("go.mod of the program has a replace directive or cannot be read (%v):\n%s", err, mod)
	}

	got := run(t, app, nil, filepath.Join(app, "hello"))
	if want := "Ready True after 1m0s InProgress\n"; got != want {
		t.Errorf("the program printed %q, want %q", got, want)
	}
}

// serveModule lays out in dir a module proxy, in the GOPROXY protocol's file layout, that
// serves the module in root at version.
func serveModule(t *testing.T, dir, root, version string) {
	t.Helper()
	at := filepath.Join(dir, filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(at, "list"), version+"\n")
	write(t, filepath.Join(at, version+".info"), string(info))
	write(t, filepath.Join(at, version+".mod"), string(mod))

	f, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := zipModule(f, root, modulePath+"@"+version+"/"); err != nil {
		t.Fatalf("packing %s: %v", root, err)
	}
}

// zipModule writes the module in root to w in the module zip format, every file under
// prefix, leaving out what a release leaves out: version-control and vendor directories,
// nested modules (directories with a go.mod of their own, such as hack/tools), anything
// that is not a regular file, and the build outputs in bin/.
func zipModule(w io.Writer, root, prefix string) error {
	zw := zip.NewWriter(w)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			switch d.Name() {
			case ".git", ".hg", ".svn", ".bzr", "vendor":
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := zw.Create(prefix + rel)
		if err != nil {
			return err
		}
		_, err = io.Copy(dst, src)
		return err
	})
	if err != nil {
		return err
	}
	return zw.Close()
}

// fileURL is the file:// URL of a local directory, as GOPROXY takes it.
func fileURL(dir string) string {
	return "file://" + filepath.ToSlash(dir)
}
