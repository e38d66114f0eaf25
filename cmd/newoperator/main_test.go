package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The library a copy requires is the checkout the program runs in, else the version it
// was built at; with neither, the error names the flag to pass.
func TestLibraryIsTheCheckoutElseTheBuildsVersion(t *testing.T) {
	checkout := checkoutAbove(mustAbs(t, "."))
	if checkout == "" {
		t.Fatal("no reconcilekit checkout holds this directory")
	}
	for _, tc := range []struct {
		name, checkout, built, flag string
		want, wantErr               string
	}{
		{name: "in a checkout", checkout: checkout, built: "(devel)", want: checkout},
		{name: "run at a release", built: "v0.1.0", want: "v0.1.0"},
		{name: "run at a pseudo-version", built: "v0.1.1-0.20260101000000-abcdef123456", want: "v0.1.1-0.20260101000000-abcdef123456"},
		{name: "the flag over the release", built: "v0.1.0", flag: "v0.2.0", want: "v0.2.0"},
		{name: "the flag over the checkout", checkout: checkout, flag: "/elsewhere", want: "/elsewhere"},
		{name: "a build of a checkout, run elsewhere", built: "(devel)", wantErr: "pass -library"},
		{name: "a build of a modified checkout, run elsewhere", built: "v0.1.1-0.20260101000000-abcdef123456+dirty", wantErr: "pass -library"},
		{name: "no build information", built: "", wantErr: "pass -library"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options{from: "memcached", module: "example.com/acme/redis-operator", group: "cache.acme.io", kind: "Redis", library: tc.flag}
			err := o.complete(tc.checkout, tc.built)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("complete() = %v, want an error that says %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatalf("complete() = %v", err)
			case tc.wantErr == "" && o.library != tc.want:
				t.Errorf("library = %q, want %q", o.library, tc.want)
			}
		})
	}
}

// -scope Cluster copies the cluster-scoped variant of the minimal template; an example,
// whose logic puts its children in its object's namespace, is refused with the template to
// use instead, and a scope of another spelling with the two there are.
func TestScopeClusterMakesAClusterScopedKindFromTheMinimalTemplateAlone(t *testing.T) {
	checkout := checkoutAbove(mustAbs(t, "."))
	for _, tc := range []struct {
		name, from, scope string
		wantScope         string // of the copy's CRD and +kubebuilder:resource marker
		wantErr           string
	}{
		{name: "namespaced by default", from: minimal, wantScope: namespaced},
		{name: "namespaced when asked", from: minimal, scope: namespaced, wantScope: namespaced},
		{name: "cluster-scoped minimal", from: minimal, scope: cluster, wantScope: cluster},
		{name: "cluster-scoped example", from: "memcached", scope: cluster, wantErr: "use -from minimal -scope Cluster"},
		{name: "a scope in lower case", from: minimal, scope: "cluster", wantErr: `-scope "cluster": want Namespaced or Cluster`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options{from: tc.from, module: "example.com/acme/redis-operator", group: "cache.acme.io", kind: "Redis",
				library: "v0.1.0", dir: filepath.Join(t.TempDir(), "redis-operator"), scope: tc.scope}
			err := o.complete(checkout, "")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("complete() = %v, want an error that says %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := create(o); err != nil {
				t.Fatal(err)
			}
			files := readTree(t, o.dir)
			if crd := files["config/crd/bases/cache.acme.io_redises.yaml"]; !strings.Contains(crd, "\n  scope: "+tc.wantScope+"\n") {
				t.Errorf("the copy's CRD is not of scope %s:\n%s", tc.wantScope, crd)
			}
			if types := files["api/v1alpha1/redis_types.go"]; !strings.Contains(types, "+kubebuilder:resource:path=redises,scope="+tc.wantScope) {
				t.Errorf("the copy's types do not say scope=%s:\n%s", tc.wantScope, types)
			}
		})
	}
}

// Outside a checkout the templates are the embedded ones, and a copy made from them is
// the copy of the checkout's template: the same files, renamed the same way.
func TestEmbeddedTemplatesMakeTheCheckoutsCopy(t *testing.T) {
	checkout := checkoutAbove(mustAbs(t, "."))
	for _, tc := range []struct{ from, scope string }{{minimal, ""}, {minimal, cluster}, {"memcached", ""}} {
		t.Run(tc.from+" "+tc.scope, func(t *testing.T) {
			copies := map[string]map[string]string{}
			for how, root := range map[string]string{"checkout": checkout, "embedded": ""} {
				o := options{from: tc.from, module: "example.com/acme/redis-operator", group: "cache.acme.io", kind: "Redis",
					library: "v0.1.0", dir: filepath.Join(t.TempDir(), "redis-operator"), scope: tc.scope}
				if err := o.complete(root, ""); err != nil {
					t.Fatal(err)
				}
				if err := create(o); err != nil {
					t.Fatal(err)
				}
				copies[how] = readTree(t, o.dir)
			}
			if len(copies["embedded"]) == 0 {
				t.Fatal("the copy from the embedded template is empty")
			}
			for name, content := range copies["checkout"] {
				if copies["embedded"][name] != content {
					t.Errorf("%s differs between the copies of the checkout's template and of the embedded one: run make generate", name)
				}
			}
			for name := range copies["embedded"] {
				if _, ok := copies["checkout"][name]; !ok {
					t.Errorf("%s is in the copy of the embedded template alone: run make generate", name)
				}
			}
		})
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func mustAbs(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
