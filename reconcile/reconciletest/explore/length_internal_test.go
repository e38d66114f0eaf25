package explore

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFunctionLines is the most lines a function of the package may take: a screen. A
// longer one hides the steps it is made of (runIn once took 320, with three oracles
// inline in it).
const maxFunctionLines = 80

// longFunctions names each function of src (a Go file's text, named file) longer than
// maxFunctionLines, with its length.
func longFunctions(t *testing.T, file, src string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var long []string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok {
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFunctionLines {
				long = append(long, fmt.Sprintf("%s: %s takes %d lines", file, fn.Name.Name, n))
			}
		}
	}
	return long
}

func TestNoFunctionOfThePackageIsLongerThanAScreen(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue // a table of cases is long by nature
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range longFunctions(t, file, string(src)) {
			t.Errorf("%s, more than %d: split it into the steps it is made of", l, maxFunctionLines)
		}
	}
}

func TestAFunctionLongerThanAScreenIsFound(t *testing.T) {
	body := func(lines int) string { return strings.Repeat("\t_ = 0\n", lines) }
	for _, tc := range []struct {
		name  string
		lines int // the function's, its braces included
		long  bool
	}{
		{"a screen", maxFunctionLines, false},
		{"a line more", maxFunctionLines + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\n\nfunc f() {\n" + body(tc.lines-2) + "}\n"
			if got := len(longFunctions(t, "p.go", src)) > 0; got != tc.long {
				t.Errorf("found long: %v, want %v", got, tc.long)
			}
		})
	}
}
