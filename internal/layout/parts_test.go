package layout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The shell (package reconcile) is a chain of parts, each in a file of its own, listed in
// docs/architecture.md's shellparts block as `part: file`. A part may use what its own file
// declares and what the shell's other files (those of no part) declare, never what another
// part's file declares unexported: each part reaches the others only through the shell,
// which composes them. Exported identifiers are the package's API and free to all.

// part is one line of the shellparts block.
type part struct {
	line       int
	name, file string // file is relative to the module's root
}

// readParts reads the shellparts block of docs/architecture.md.
func readParts(t *testing.T, path string) []part {
	t.Helper()
	var parts []part
	for _, l := range readBlock(t, path, "shellparts", "part: file") {
		parts = append(parts, part{line: l.n, name: l.key, file: l.value})
	}
	return parts
}

// checkParts reports every use, in a part's file, of an unexported identifier another
// part's file declares (a type, function, variable, constant, method or field), and every
// part whose file is not among files. files are pkg's, by base name; parts names
// the part of each part file, by base name.
func checkParts(fset *token.FileSet, pkg *types.Package, files map[string]*ast.File, info *types.Info, parts map[string]string) []string {
	var problems []string
	for file, name := range parts {
		if _, ok := files[file]; !ok {
			problems = append(problems, fmt.Sprintf("part %q: no file %s in the package", name, file))
		}
	}
	for file, f := range files {
		user, isPart := parts[file]
		if !isPart {
			continue
		}
		seen := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := info.Uses[id]
			if obj == nil || obj.Exported() || obj.Pkg() != pkg || !obj.Pos().IsValid() {
				return true
			}
			declared := filepath.Base(fset.Position(obj.Pos()).Filename)
			owner, ownedByPart := parts[declared]
			if !ownedByPart || declared == file {
				return true
			}
			problem := fmt.Sprintf("%s (part %q) uses %s of %s (part %q): reach it through the shell", file, user, obj.Name(), declared, owner)
			if !seen[problem] {
				seen[problem] = true
				problems = append(problems, problem)
			}
			return true
		})
	}
	slices.Sort(problems)
	return problems
}

// checkPackage type-checks the package of dir (its non-test files) against its
// dependencies' export data, and checks its parts.
func checkPackage(t *testing.T, root, dir string, parts map[string]string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export,Dir,GoFiles", "./"+dir)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export ./%s: %v", dir, err)
	}
	exports := map[string]string{}
	var self struct {
		ImportPath, Export, Dir string
		GoFiles                 []string
	}
	d := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Export, Dir string
			GoFiles                 []string
		}
		if err := d.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		self = p // -deps lists the package itself last
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	var list []*ast.File
	for _, name := range self.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(self.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		list = append(list, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		export, ok := exports[path]
		if !ok || export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(export)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check(self.ImportPath, fset, list, info)
	if err != nil {
		t.Fatalf("type-checking %s: %v", self.ImportPath, err)
	}
	return checkParts(fset, pkg, files, info, parts)
}

func TestTheShellsPartsUseNoOtherPartsInternals(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string]map[string]string{}
	for _, p := range readParts(t, filepath.Join(root, "docs", "architecture.md")) {
		dir := filepath.Dir(p.file)
		if byDir[dir] == nil {
			byDir[dir] = map[string]string{}
		}
		byDir[dir][filepath.Base(p.file)] = p.name
	}
	for dir, parts := range byDir {
		for _, problem := range checkPackage(t, root, dir, parts) {
			t.Error(problem + " (docs/architecture.md, the shellparts block)")
		}
	}
}

// TestCheckPartsFindsAPartUsingAnothersInternals proves the check can fail: a made-up
// package whose part a uses part b's unexported type, function and field.
func TestCheckPartsFindsAPartUsingAnothersInternals(t *testing.T) {
	sources := map[string]string{
		"shell.go": "package p\n\ntype shell struct{ a a; b *b }\n\nfunc helper() int { return 1 }\n\nfunc (s shell) run() int { return s.a.n + s.b.m + newB().m }\n",
		"a.go":     "package p\n\ntype a struct{ n int }\n\nfunc (x a) peek(y *b) int { return y.m + newB().m + helper() + Exported }\n",
		"b.go":     "package p\n\nconst Exported = 1\n\ntype b struct{ m int }\n\nfunc newB() *b { return &b{} }\n",
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	var list []*ast.File
	for _, name := range []string{"shell.go", "a.go", "b.go"} {
		f, err := parser.ParseFile(fset, name, sources[name], parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		list = append(list, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{}).Check("p", fset, list, info)
	if err != nil {
		t.Fatal(err)
	}
	got := checkParts(fset, pkg, files, info, map[string]string{"a.go": "part a", "b.go": "part b", "gone.go": "part gone"})
	want := []string{
		`a.go (part "part a") uses b of b.go (part "part b"): reach it through the shell`,
		`a.go (part "part a") uses m of b.go (part "part b"): reach it through the shell`,
		`a.go (part "part a") uses newB of b.go (part "part b"): reach it through the shell`,
		`part "part gone": no file gone.go in the package`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkParts found\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}
