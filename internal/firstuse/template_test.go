package firstuse_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An example is a template: a new operator starts as a copy of it. Each example, copied as
// docs/getting-started.md says into a module of its own with a new module path and API
// group, regenerates, builds, passes vet and passes its own tests there, against this
// checkout of the library.
func TestExampleWorksAsTheTemplateOfANewOperator(t *testing.T) {
	root := checkout(t)
	for _, ex := range examples(t, root) {
		t.Run(ex.name, func(t *testing.T) {
			dir := t.TempDir()
			module := "example.com/my-" + ex.name + "-operator"
			oldGroup, newGroup := ex.group+".example.com", ex.group+".my.domain"
			copyTree(t, filepath.Join(root, "examples", ex.name), dir)
			replaceAll(t, dir,
				"github.com/reconcilekit/reconcilekit/examples/"+ex.name, module,
				oldGroup, newGroup,
				"domain: example.com", "domain: my.domain")

			// The library comes from this checkout rather than from a release; everything
			// else from the module cache, as the checkout's go.sum pins it.
			write(t, filepath.Join(dir, "go.mod"), "module "+module+"\n\ngo 1.26.0\n\n"+
				"require github.com/reconcilekit/reconcilekit v0.0.0-00010101000000-000000000000\n\n"+
				"replace github.com/reconcilekit/reconcilekit => "+root+"\n")
			sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, "go.sum"), string(sum))
			env := append([]string{"GOPROXY=off", goFlags}, goEnv...)
			run(t, dir, env, "go", "build", "./...")

			// Regenerate what the markers say, under the new group: the old CRD file goes,
			// and the new one must be the one config/crd/kustomization.yaml now names.
			bases := filepath.Join(dir, "config", "crd", "bases")
			if err := os.RemoveAll(bases); err != nil {
				t.Fatal(err)
			}
			tool(t, root, dir, "controller-gen", "object", "crd", "rbac:roleName=manager-role", "paths=./...",
				"output:crd:artifacts:config=config/crd/bases", "output:rbac:artifacts:config=config/rbac")
			manifests := tool(t, root, dir, "kustomize", "build", "config/default")
			if !strings.Contains(manifests, "group: "+newGroup) || strings.Contains(manifests, oldGroup) {
				t.Errorf("the manifests of the copy do not define group %s alone:\n%s", newGroup, manifests)
			}

			run(t, dir, env, "go", "vet", "./...")
			t.Log(run(t, dir, env, "go", "test", "-count=1", "./..."))
		})
	}
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// replaceAll makes the replacements of oldnew, pairs of old and new strings as for
// strings.NewReplacer, in every file under dir: the sed of the getting-started guide.
func replaceAll(t *testing.T, dir string, oldnew ...string) {
	t.Helper()
	r := strings.NewReplacer(oldnew...)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(path, []byte(r.Replace(string(data))), 0o644)
	})
	if err != nil {
		t.Fatalf("renaming in %s: %v", dir, err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
