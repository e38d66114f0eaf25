package main

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"
)

// The templates travel inside the program, so that go run ...@version makes an operator
// with no checkout at hand: one archive for each template, and one of the library's files
// a copy starts from (the go line and go.sum of its go.mod, the build tools' module). They
// are copies of the checkout's files that make generate refreshes
// (TestEmbeddedTemplatesAreTheCheckouts -update) and make verify-generated finds stale.
// They are archives rather than trees so that the go command neither builds, vets nor
// lints them as packages of this module, and so that a go.mod among them (the minimal
// template's) does not cut them out of the module.
//
//go:embed templates/*.txtar
var archives embed.FS

// libraryArchive is the archive of the library's own files, beside the templates'.
const libraryArchive = "library"

// libraryFiles are the files of the library, by slash-separated path from its root, that
// a copy starts from.
var libraryFiles = []string{"go.mod", "go.sum", "examples/go.mod", "examples/go.sum", "hack/tools/go.mod", "hack/tools/go.sum"}

// templateDir is where a template lives in a checkout of the library: the minimal one,
// and its cluster-scoped variant, beside this program, each a module of its own; the
// others among the examples.
func templateDir(name string) string {
	if name == minimal || name == minimalCluster {
		return "cmd/newoperator/" + name
	}
	return "examples/" + name
}

// embedded is the library as the archives hold it, laid out as in a checkout: the
// templates in their directories, the library's files at their paths.
func embedded() (fs.FS, error) {
	names, err := fs.Glob(archives, "templates/*.txtar")
	if err != nil {
		return nil, err
	}
	// An fstest.MapFS is an fs.FS of files in memory, which is all this needs of it.
	tree := fstest.MapFS{}
	for _, name := range names {
		data, err := archives.ReadFile(name)
		if err != nil {
			return nil, err
		}
		files, err := unpack(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		dir := strings.TrimSuffix(path.Base(name), ".txtar")
		for rel, content := range files {
			if dir != libraryArchive {
				rel = templateDir(dir) + "/" + rel
			}
			tree[rel] = &fstest.MapFile{Data: content, Mode: 0o644}
		}
	}
	return tree, nil
}

// templateNames lists the templates that lib holds: the minimal one first, then the
// examples that have a kubebuilder PROJECT file.
func templateNames(lib fs.FS) []string {
	var names []string
	if _, err := fs.Stat(lib, templateDir(minimal)+"/PROJECT"); err == nil {
		names = append(names, minimal)
	}
	examples, _ := fs.ReadDir(lib, "examples")
	for _, e := range examples {
		if _, err := fs.Stat(lib, "examples/"+e.Name()+"/PROJECT"); err == nil && e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// templateSources lists the templates of lib, as templateNames, and the variants of
// them that options choose (the minimal template's cluster-scoped one): what the archives
// hold.
func templateSources(lib fs.FS) []string {
	names := templateNames(lib)
	if _, err := fs.Stat(lib, templateDir(minimalCluster)+"/PROJECT"); err == nil {
		names = append(names, minimalCluster)
	}
	return names
}

// templateFiles reads the files of template name in lib that a copy is made of, by
// slash-separated path in the template: all but the tests ported from upstream.
func templateFiles(lib fs.FS, name string) (map[string][]byte, error) {
	src := templateDir(name)
	files := map[string][]byte{}
	err := fs.WalkDir(lib, src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, upstreamTests) {
			return err
		}
		data, err := fs.ReadFile(lib, p)
		files[strings.TrimPrefix(p, src+"/")] = data
		return err
	})
	return files, err
}

// archive is the archive of the template name, or of the library's files, in the
// checkout lib.
func archive(lib fs.FS, name string) ([]byte, error) {
	if name != libraryArchive {
		files, err := templateFiles(lib, name)
		if err != nil {
			return nil, err
		}
		return pack(files)
	}
	files := map[string][]byte{}
	for _, f := range libraryFiles {
		data, err := fs.ReadFile(lib, f)
		if err != nil {
			return nil, err
		}
		files[f] = data
	}
	return pack(files)
}

// writeArchives writes the archives of the checkout in root into dir, and removes those
// of templates it no longer has.
func writeArchives(root, dir string) error {
	lib := os.DirFS(root)
	want := map[string]bool{}
	for _, name := range append(templateSources(lib), libraryArchive) {
		data, err := archive(lib, name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		want[name+".txtar"] = true
		if err := os.WriteFile(filepath.Join(dir, name+".txtar"), data, 0o644); err != nil {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	for _, f := range old {
		if !want[filepath.Base(f)] {
			err = os.Remove(f)
		}
	}
	return err
}

// The archives are in the txtar format (golang.org/x/tools/txtar), written and read here
// to keep that module out of the library's requirements: each file is a line
// "-- path --" and then its content.

// pack makes an archive of files, by path in order. A file must end with a newline and
// hold no line that would read as a file's header, so that unpack gives it back as it is.
func pack(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("Generated by make generate from the checkout's files; do not edit.\n")
	for _, name := range names {
		data := files[name]
		if len(data) > 0 && data[len(data)-1] != '\n' {
			return nil, fmt.Errorf("%s does not end with a newline", name)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if _, ok := header(line); ok {
				return nil, fmt.Errorf("%s has a line that reads as an archive's file header: %q", name, line)
			}
		}
		fmt.Fprintf(&b, "-- %s --\n", name)
		b.Write(data)
	}
	return b.Bytes(), nil
}

// unpack reads the files of an archive, by path.
func unpack(data []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	var name string
	var content []byte
	started := false
	flush := func() {
		if started {
			files[name] = content
		}
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if n, ok := header(strings.TrimSuffix(line, "\n")); ok {
			flush()
			if _, dup := files[n]; dup {
				return nil, fmt.Errorf("%s appears twice", n)
			}
			name, content, started = n, []byte{}, true
			continue
		}
		if started {
			content = append(content, line...)
		}
	}
	flush()
	if len(files) == 0 {
		return nil, fmt.Errorf("no files")
	}
	return files, nil
}

// header returns the path a line names if it is a file's header.
func header(line string) (string, bool) {
	name, ok := strings.CutPrefix(line, "-- ")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, " --")
	name = strings.TrimSpace(name)
	return name, ok && name != ""
}
