package firstuse_test

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// A template, the minimal one or an example, is the start of a new operator. Each,
// copied and renamed by cmd/newoperator as docs/getting-started.md says (a new module
// path, API group and kind) into a module of its own, is gofmt-clean, names nothing of its
// template, builds, passes vet, regenerates to itself with make generate (the renamed CRD,
// role and deepcopy functions are what controller-gen makes of the renamed markers) and passes tests there,
// against this checkout of the library: all of them, the controllers' on a control plane
// of their own (about 35 s a template on 2 cores). The minimal template and the Keyval
// example make StatefulSet operators; minimal-cluster is the minimal template copied with
// -scope Cluster, a cluster-scoped kind whose objects each make a namespace for their
// StatefulSet, as a tenant would.
func TestTemplateWorksAsTheStartOfANewOperator(t *testing.T) {
	fasttier.Skip(t) // the copies' tests run on control planes of their own
	root := checkout(t)
	offlineModules(t, root)
	newoperator := newoperator(t, root)
	// The groups keep the rules of the generated roles in their order.
	renames := map[string]struct{ group, kind string }{
		"minimal":         {"library.acme.io", "Journal"},
		"minimal-cluster": {"tenancy.acme.io", "Tenant"}, // cluster-scoped, as a tenant is
		"memcached":       {"cache.acme.io", "Redis"},    // the guide's; plural redises, where controller-gen would guess redis
		"podset":          {"apps.acme.io", "Fleet"},
		"at":              {"chores.acme.io", "Errand"}, // an Errand: the article changes
		"keyval":          {"vault.acme.io", "Ledger"},
		"cronjob":         {"data.acme.io", "Backup"}, // periodic work
	}
	for _, tmpl := range templates(t, root) {
		t.Run(tmpl.name, func(t *testing.T) {
			rename, ok := renames[tmpl.name]
			if !ok {
				// A new example is its directory alone: it is copied as a Gadget until it
				// has a rename of its own here.
				rename = struct{ group, kind string }{"gadgets.acme.io", "Gadget"}
			}
			dir := filepath.Join(t.TempDir(), "operator")
			// A module path of the new kind's, so that none of the template's names is
			// there by the test's choice.
			module := "example.com/acme/" + strings.ToLower(rename.kind) + "-operator"
			// The library comes from this checkout (-library's default) rather than from
			// a release; everything else from the module cache, as the checkout's go.sum
			// pins it.
			t.Log(run(t, root, nil, newoperator, append([]string{"-from", tmpl.from, "-module", module,
				"-group", rename.group, "-kind", rename.kind, "-dir", dir}, tmpl.args...)...))
			if out := run(t, dir, nil, "gofmt", "-l", "."); out != "" {
				t.Errorf("gofmt would change the copy's files:\n%s", out)
			}
			hits, err := leftovers(dir, tmpl.template, rename.group)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) > 0 {
				t.Errorf("the copy names its template %s in %d places:\n%s", tmpl.name, len(hits), strings.Join(hits, "\n"))
			}
			env := append([]string{"GOPROXY=off", goFlags}, goEnv...)
			run(t, dir, env, "go", "build", "./...")

			// Regenerate what the markers say: the old CRD file goes, and the new files
			// must be the ones the rename wrote.
			bases := filepath.Join(dir, "config", "crd", "bases")
			before := snapshot(t, dir)
			if err := os.RemoveAll(bases); err != nil {
				t.Fatal(err)
			}
			// As the copy's Makefile does it, with the build tools the copy pins, in an
			// environment of make's own, not as a child of the make that may be running
			// these tests.
			run(t, dir, append([]string{"GOPROXY=off", "MAKEFLAGS=", "MAKELEVEL=", "MFLAGS="}, goEnv...), "make", "-s", "generate")
			after := snapshot(t, dir)
			for name, content := range after {
				if !sameContent(t, name, before[name], content) {
					t.Errorf("regenerating changes %s: the rename missed something there:\n%s", name, content)
				}
			}
			for name := range before {
				if _, ok := after[name]; !ok {
					t.Errorf("regenerating removes %s", name)
				}
			}
			manifests := tool(t, root, dir, "kustomize", "build", "config/default")
			if !strings.Contains(manifests, "group: "+rename.group) || strings.Contains(manifests, tmpl.group) {
				t.Errorf("the manifests of the copy do not define group %s alone:\n%s", rename.group, manifests)
			}

			run(t, dir, env, "go", "vet", "./...")
			t.Log(run(t, dir, env, "go", "test", "-count=1", "./..."))
		})
	}
}

// A namedTemplate is a template of cmd/newoperator, by the name of its directory: the
// template -from names, copied with args beside (-scope Cluster).
type namedTemplate struct {
	name, from string
	args       []string
	template
}

// templates returns the templates of the checkout in root: the minimal one, then the
// examples, each described by its PROJECT file and its CRD's file name.
func templates(t *testing.T, root string) []namedTemplate {
	t.Helper()
	dirs := map[string]string{
		"minimal":         filepath.Join(root, "cmd", "newoperator", "minimal"),
		"minimal-cluster": filepath.Join(root, "cmd", "newoperator", "minimal-cluster"),
	}
	names := []string{"minimal", "minimal-cluster"}
	for _, ex := range examples(t, root) {
		dirs[ex.name] = filepath.Join(root, "examples", ex.name)
		names = append(names, ex.name)
	}
	var list []namedTemplate
	for _, name := range names {
		project, err := os.ReadFile(filepath.Join(dirs[name], "PROJECT"))
		if err != nil {
			t.Fatal(err)
		}
		field := func(key string) string {
			_, v, ok := strings.Cut(string(project), "\n"+key+": ")
			if !ok {
				_, v, _ = strings.Cut(string(project), "\n  "+key+": ")
			}
			v, _, _ = strings.Cut(v, "\n")
			return strings.TrimSpace(v)
		}
		tmpl := template{module: field("repo"), group: field("group") + "." + field("domain"), kind: field("kind"),
			// What the Memcached runs is memcached, which its copies keep.
			runsLower: name == "memcached",
			// The At's kind is an English word.
			englishKind: name == "at"}
		versions, err := os.ReadDir(filepath.Join(dirs[name], "api"))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range versions {
			tmpl.versions = append(tmpl.versions, v.Name())
		}
		crds, err := filepath.Glob(filepath.Join(dirs[name], "config", "crd", "bases", tmpl.group+"_*.yaml"))
		if err != nil || len(crds) != 1 {
			t.Fatalf("template %s: want one CRD of group %s in config/crd/bases, have %v (%v)", name, tmpl.group, crds, err)
		}
		tmpl.plural = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(crds[0]), tmpl.group+"_"), ".yaml")
		nt := namedTemplate{name: name, from: name, template: tmpl}
		if name == "minimal-cluster" {
			nt.from, nt.args = "minimal", []string{"-scope", "Cluster"}
		}
		list = append(list, nt)
	}
	return list
}

// sameContent reports whether a file's content is the same before and after: the same
// text, or for YAML, the same objects. A longer name makes a description wrap at another
// word in a regenerated CRD, which is the same CRD.
func sameContent(t *testing.T, name, before, after string) bool {
	t.Helper()
	if before == after || !strings.HasSuffix(name, ".yaml") {
		return before == after
	}
	var b, a []any
	for _, doc := range []struct {
		text string
		into *[]any
	}{{before, &b}, {after, &a}} {
		d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(doc.text), 4096)
		for {
			var obj any
			if err := d.Decode(&obj); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("decoding %s: %v", name, err)
				return false
			}
			*doc.into = append(*doc.into, obj)
		}
	}
	return reflect.DeepEqual(b, a)
}

// snapshot returns the content of every file under dir, by path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
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

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
