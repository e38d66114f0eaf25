package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the embedded templates from the checkout (make generate does)")

// The templates inside the program are the checkout's: each archive holds what its
// template's directory does (but for the tests ported from upstream), and the library's
// archive its go.mod, go.sum and build tools. make generate runs this test with -update.
func TestEmbeddedTemplatesAreTheCheckouts(t *testing.T) {
	root := checkoutAbove(mustAbs(t, "."))
	if root == "" {
		t.Fatal("no reconcilekit checkout holds this directory")
	}
	if *update {
		if err := writeArchives(root, "templates"); err != nil {
			t.Fatal(err)
		}
	}
	lib := os.DirFS(root)
	names := templateNames(lib)
	// The examples are the directories of examples/ with a PROJECT file, the one list of
	// them (hack/generate.sh and the Makefile read it too).
	projects, err := filepath.Glob(filepath.Join(root, "examples", "*", "PROJECT"))
	if err != nil || len(projects) == 0 {
		t.Fatalf("no example in %s: %v", root, err)
	}
	want := []string{minimal}
	for _, p := range projects {
		want = append(want, filepath.Base(filepath.Dir(p)))
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("the checkout's templates are %v, want %v", names, want)
	}
	committed, err := filepath.Glob(filepath.Join("templates", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	sources := templateSources(lib)
	if want := append(names, minimalCluster); !reflect.DeepEqual(sources, want) {
		t.Errorf("the checkout's templates and their variants are %v, want %v", sources, want)
	}
	if len(committed) != len(sources)+1 {
		t.Errorf("templates/ holds %d archives, want %d (one for each template and variant, and the library's): run make generate", len(committed), len(sources)+1)
	}
	for _, name := range append(sources, libraryArchive) {
		want, err := archive(lib, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("templates", name+".txtar"))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the embedded archive of %s is not the checkout's (%v): run make generate", name, err)
		}
	}
}

// Each file of an archive is read back as it was packed.
func TestArchiveKeepsEveryFileAsItIs(t *testing.T) {
	files := map[string][]byte{
		"PROJECT":           []byte("domain: example.com\n"),
		"api/v1/types.go":   []byte("package v1\n\n// -- not a header\n"),
		"empty":             {},
		"config/a/b/c.yaml": []byte("a: b\n--\n---\n"),
		"hack/tools/go.mod": []byte("module x\n"),
	}
	data, err := pack(files)
	if err != nil {
		t.Fatal(err)
	}
	got, err := unpack(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, files) {
		t.Errorf("unpack(pack(files)) = %q, want %q", got, files)
	}
}

// A file the format cannot hold as it is is refused, not changed.
func TestArchiveRefusesWhatItCannotKeep(t *testing.T) {
	for name, content := range map[string]string{
		"no final newline": "package v1",
		"a header's line":  "a\n-- b --\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := pack(map[string][]byte{"f": []byte(content)}); err == nil || !strings.Contains(err.Error(), "f ") {
				t.Errorf("pack(%q) = %v, want an error that names the file", content, err)
			}
		})
	}
}

// Every template's TestMain sets controller-runtime's logger, so that a failing test of a
// new operator shows the operator's logs rather than controller-runtime's "SetLogger was
// never called" stack.
func TestEveryTemplatesTestMainSetsALogger(t *testing.T) {
	lib, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range templateNames(lib) {
		data, err := os.ReadFile(filepath.Join("templates", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		files, err := unpack(data)
		if err != nil {
			t.Fatal(err)
		}
		mains := 0
		for file, content := range files {
			if !strings.HasSuffix(file, "_test.go") || !strings.Contains(string(content), "func TestMain(") {
				continue
			}
			mains++
			if !strings.Contains(string(content), "ctrl.SetLogger(") {
				t.Errorf("%s of template %s has a TestMain that sets no logger: call ctrl.SetLogger in it", file, name)
			}
		}
		if mains == 0 {
			t.Errorf("template %s has no TestMain", name)
		}
	}
}
