package docs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/reconcilekit/reconcilekit"

// root is the module's directory, from this package's.
const root = "../.."

// library is one package a user imports: its import path, directory and exported API.
type library struct {
	path, dir, name string
	files           map[string]*ast.File
	names           map[string]bool            // exported top-level names
	members         map[string]map[string]bool // type name: its exported methods and fields
	embeds          map[string][]string        // type name: the same package's types it embeds
}

// has reports whether name, or typ.member when member is not empty, is in the package's API.
func (l *library) has(name, member string) bool {
	if !l.names[name] {
		return false
	}
	if member == "" {
		return true
	}
	seen := map[string]bool{}
	var walk func(t string) bool
	walk = func(t string) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		if l.members[t][member] {
			return true
		}
		return slices.ContainsFunc(l.embeds[t], walk)
	}
	return walk(name)
}

// isLibrary reports whether an import path of the module is API a user imports.
func isLibrary(path string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	for _, not := range []string{"examples", "test", "cmd", "hack", "internal"} {
		if rel == not || strings.HasPrefix(rel, not+"/") {
			return false
		}
	}
	return true
}

// loadLibrary lists the module's packages with go list and parses the library's.
func loadLibrary(t *testing.T) map[string]*library {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,Name", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	libs := map[string]*library{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct{ ImportPath, Dir, Name string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if !isLibrary(p.ImportPath) {
			continue
		}
		libs[p.Name] = parseLibrary(t, p.ImportPath, p.Dir, p.Name)
	}
	return libs
}

func parseLibrary(t *testing.T, path, dir, name string) *library {
	t.Helper()
	l := &library{path: path, dir: dir, name: name, files: map[string]*ast.File{},
		names: map[string]bool{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	member := func(typ, name string) {
		if l.members[typ] == nil {
			l.members[typ] = map[string]bool{}
		}
		l.members[typ][name] = true
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		file := filepath.Join(dir, e.Name())
		if strings.HasSuffix(e.Name(), "_test.go") {
			testNames(l, file)
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		l.files[file] = f
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					l.names[d.Name.Name] = true
				} else {
					member(receiver(d), d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						l.names[s.Name.Name] = true
						typeMembers(l, s, member)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							l.names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return l
}

// testNames records the tests, fuzz targets, benchmarks and examples of a test file: the
// docs name them too (conditions.FuzzSet, storage.ExampleMigrate).
func testNames(l *library, file string) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return // go vet reports it
	}
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Recv == nil {
			for _, prefix := range []string{"Test", "Fuzz", "Benchmark", "Example"} {
				if strings.HasPrefix(d.Name.Name, prefix) {
					l.names[d.Name.Name] = true
				}
			}
		}
	}
}

// typeMembers records the fields and interface methods of a type, and what it embeds.
func typeMembers(l *library, s *ast.TypeSpec, member func(typ, name string)) {
	var fields *ast.FieldList
	switch u := s.Type.(type) {
	case *ast.StructType:
		fields = u.Fields
	case *ast.InterfaceType:
		fields = u.Methods
	default:
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			if id := baseIdent(f.Type); id != "" {
				l.embeds[s.Name.Name] = append(l.embeds[s.Name.Name], id)
			}
			continue
		}
		for _, n := range f.Names {
			member(s.Name.Name, n.Name)
		}
	}
}

// baseIdent is the name of a type expression without pointers, type arguments or package.
func baseIdent(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return baseIdent(e.X)
	case *ast.IndexExpr:
		return baseIdent(e.X)
	case *ast.IndexListExpr:
		return baseIdent(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

func receiver(d *ast.FuncDecl) string { return baseIdent(d.Recv.List[0].Type) }

// docFiles are the pages checked: the README and every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

// rel names a file as a contributor sees it, relative to the module.
func rel(path string) string {
	abs, _ := filepath.Abs(root)
	p, _ := filepath.Abs(path)
	if r, err := filepath.Rel(abs, p); err == nil {
		return r
	}
	return path
}

// block is one fenced Go block of a page.
type block struct {
	page     string
	fence    int // line of the opening fence
	text     string
	fragment bool
	// file is the path, from the module's root, of the file the block shows whole, from a
	// <!-- file: path --> comment right before its fence; "" for another block.
	file string
	// context are declarations the page shows elsewhere or not at all (a type, a helper),
	// from a <!-- go context ... --> comment right before the block, and the line they start.
	context     string
	contextLine int
}

// scan reads a page: its Go blocks, and calls span for each code span outside blocks.
func scan(t *testing.T, page string, span func(line int, text string)) []block {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks    []block
		cur       *block
		inFence   bool
		fence     string
		previous  string // the last non-blank line before a fence
		body      strings.Builder
		context   *strings.Builder // open <!-- go context --> comment
		pending   string           // a closed one, for the next block
		pendingAt int
	)
	s := bufio.NewScanner(bytes.NewReader(raw))
	s.Buffer(nil, 1<<20)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case context != nil && line == "-->":
			pending, context = context.String(), nil
		case context != nil:
			context.WriteString(line + "\n")
		case !inFence && line == "<!-- go context":
			context, pendingAt = &strings.Builder{}, n+1
		case !inFence && strings.HasPrefix(trimmed, "```"):
			inFence, fence = true, trimmed[:strings.LastIndex(trimmed, "`")+1]
			if strings.TrimSpace(strings.TrimPrefix(trimmed, fence)) == "go" {
				cur = &block{page: page, fence: n, fragment: strings.HasPrefix(previous, "<!-- fragment"),
					context: pending, contextLine: pendingAt}
				if f, ok := strings.CutPrefix(previous, "<!-- file: "); ok {
					cur.file = strings.TrimSpace(strings.TrimSuffix(f, "-->"))
				}
				body.Reset()
			}
		case inFence && trimmed == fence:
			inFence = false
			if cur != nil {
				cur.text = body.String()
				blocks = append(blocks, *cur)
				cur = nil
			}
			pending = ""
		case inFence:
			if cur != nil {
				body.WriteString(line + "\n")
			}
		default:
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				span(n, m[1])
			}
		}
		if trimmed != "" && !strings.HasPrefix(trimmed, "```") && context == nil && trimmed != "-->" {
			previous = trimmed
		}
	}
	return blocks
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// reference is pkg.Name or pkg.Type.Member in a code span.
	reference = regexp.MustCompile(`(?:^|[^\w./])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
)

// TestDocsNameOnlyWhatExists fails on a code span of the README or docs/ naming pkg.Name or
// pkg.Type.Member of one of the library's packages that the package does not declare.
func TestDocsNameOnlyWhatExists(t *testing.T) {
	libs := loadLibrary(t)
	// reconcile and webhook are also controller-runtime's package names: a span naming one of
	// theirs (reconcile.Request, webhook.Server) is true too.
	for name, path := range map[string]string{
		"reconcile": "sigs.k8s.io/controller-runtime/pkg/reconcile",
		"webhook":   "sigs.k8s.io/controller-runtime/pkg/webhook",
	} {
		cmd := exec.Command("go", "list", "-f", "{{.Dir}}", path)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", path, err)
		}
		upstream := parseLibrary(t, path, strings.TrimSpace(string(out)), name)
		if l := libs[name]; l != nil {
			libs["upstream "+name] = upstream
		}
	}
	checked := 0
	for _, page := range docFiles(t) {
		scan(t, page, func(line int, text string) {
			for _, m := range reference.FindAllStringSubmatch(text, -1) {
				pkg, name, member := m[1], m[2], m[3]
				l := libs[pkg]
				if l == nil {
					continue
				}
				checked++
				if l.has(name, member) {
					continue
				}
				if u := libs["upstream "+pkg]; u != nil && u.has(name, member) {
					continue
				}
				what := pkg + "." + name
				if member != "" {
					what += "." + member
				}
				t.Errorf("%s:%d: `%s` names %s, which package %s does not declare: "+
					"rename it to what the code has now (go doc %s), or drop it", rel(page), line, text, what, l.path, l.path)
			}
		})
	}
	t.Logf("%d references to the library checked", checked)
}

// imports are the packages a wrapped block may use without importing them, by the name
// docs use for them; the library's own packages are added by name.
var imports = map[string]string{
	"context":      "context",
	"errors":       "errors",
	"fmt":          "fmt",
	"http":         "net/http",
	"os":           "os",
	"filepath":     "path/filepath",
	"rand":         "math/rand/v2",
	"strings":      "strings",
	"testing":      "testing",
	"time":         "time",
	"ctrl":         "sigs.k8s.io/controller-runtime",
	"client":       "sigs.k8s.io/controller-runtime/pkg/client",
	"builder":      "sigs.k8s.io/controller-runtime/pkg/builder",
	"manager":      "sigs.k8s.io/controller-runtime/pkg/manager",
	"metav1":       "k8s.io/apimachinery/pkg/apis/meta/v1",
	"corev1":       "k8s.io/api/core/v1",
	"appsv1":       "k8s.io/api/apps/v1",
	"runtime":      "k8s.io/apimachinery/pkg/runtime",
	"apierrors":    "k8s.io/apimachinery/pkg/api/errors",
	"types":        "k8s.io/apimachinery/pkg/types",
	"ptr":          "k8s.io/utils/ptr",
	"rest":         "k8s.io/client-go/rest",
	"logr":         "github.com/go-logr/logr",
	"cachev1beta1": module + "/examples/memcached/api/v1beta1",
}

// TestBlocksShowingAFileAreThatFile holds each block marked <!-- file: path --> (a file of
// the checkout shown whole, such as the adopted controller of docs/adopting.md, which
// test/adopt builds and runs in a scaffolded project) to that file, byte for byte, so that
// the page shows what is tested.
func TestBlocksShowingAFileAreThatFile(t *testing.T) {
	shown := 0
	for _, page := range docFiles(t) {
		for _, b := range scan(t, page, func(int, string) {}) {
			if b.file == "" {
				continue
			}
			shown++
			want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(b.file)))
			if err != nil {
				t.Errorf("%s:%d shows the file %s, which cannot be read: %v; name a file of the checkout, from its root", rel(page), b.fence, b.file, err)
				continue
			}
			if b.text != string(want) {
				t.Errorf("%s:%d shows the file %s, but the block differs from it from line %d of the file on; copy the file into the block whole",
					rel(page), b.fence, b.file, firstDifference(b.text, string(want)))
			}
		}
	}
	if shown == 0 {
		t.Errorf("no page shows a file whole (<!-- file: path --> before a fence); docs/adopting.md shows the adopted controller so")
	}
}

// firstDifference returns the number of the first line where got and want differ, from 1.
func firstDifference(got, want string) int {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return i + 1
		}
	}
	return min(len(g), len(w)) + 1
}

// TestGoBlocksCompile builds every Go block of the README and docs/ not marked a fragment.
func TestGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every Go block of the docs: not in -short")
	}
	libs := loadLibrary(t)
	known := map[string]string{}
	for k, v := range imports {
		known[k] = v
	}
	for name, l := range libs {
		known[name] = l.path
	}
	// The blocks build in the examples' module, which requires the library of this
	// checkout and holds the examples some blocks import (the library's does not).
	blocks := filepath.Join(root, "examples")
	dir, err := os.MkdirTemp(blocks, "_docblocks")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	compiled, fragments := 0, 0
	for _, page := range docFiles(t) {
		for _, b := range scan(t, page, func(int, string) {}) {
			if b.fragment || b.file != "" { // a file shown whole builds where it lives
				fragments++
				continue
			}
			compiled++
			src := wrap(b, known)
			pkg := filepath.Join(dir, fmt.Sprintf("b%d", compiled))
			if err := os.Mkdir(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkg, "block.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Join(filepath.Base(dir), filepath.Base(pkg))))
		}
	}
	t.Logf("%d Go blocks built, %d marked fragments", compiled, fragments)
	if len(pkgs) == 0 {
		return
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	cmd.Dir = blocks
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	if strings.Contains(string(out), "too many errors") {
		t.Logf("the compiler stopped counting; fix what it names and run again")
	}
	var failed []string
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.Contains(line, "declared and not used") {
			continue // a block may show how to get a value without going on to use it
		}
		failed = append(failed, strings.TrimPrefix(strings.TrimPrefix(line, "vet: "), "./"))
	}
	if len(failed) == 0 {
		return
	}
	sort.Strings(failed)
	t.Errorf("Go blocks of the docs do not compile; fix each block against the current API, or, "+
		"give it what the page declares elsewhere in a `<!-- go context ... -->` comment before its fence "+
		"(see the README's first block), or, when it is an excerpt on purpose, put `<!-- fragment: why -->` "+
		"on the line before its fence:\n%s",
		strings.Join(slices.Compact(failed), "\n"))
}

// wrap turns a block into a file to build, with //line directives so errors name the page:
// a block with a package clause as it is; else its declarations, its statements as a
// function's body, or declarations followed by statements, whichever parses first.
func wrap(b block, known map[string]string) string {
	abs, _ := filepath.Abs(b.page)
	at := func(line int) string { return fmt.Sprintf("//line %s:%d\n", abs, b.fence+1+line) }
	if strings.HasPrefix(firstCode(b.text), "package ") {
		return at(0) + b.text
	}
	lines := strings.SplitAfter(b.text, "\n")
	// A context line "func _() T" is the signature of the function a body is wrapped in,
	// for a body that returns.
	wrapper := "func _()"
	for _, line := range strings.Split(b.context, "\n") {
		if strings.HasPrefix(line, "func _(") && !strings.Contains(line, "{") {
			wrapper = line
		}
	}
	// decls and body are the block's lines before and after the split.
	compose := func(split int, directives bool) string {
		var out strings.Builder
		decls, body := strings.Join(lines[:split], ""), strings.Join(lines[split:], "")
		if directives {
			out.WriteString(at(0))
		}
		out.WriteString(decls)
		if strings.TrimSpace(body) != "" {
			out.WriteString("\n" + wrapper + " {\n")
			if directives {
				out.WriteString(at(split))
			}
			out.WriteString(body + "\n}\n")
		}
		if b.context != "" {
			out.WriteString("\n")
			if directives {
				out.WriteString(fmt.Sprintf("//line %s:%d\n", abs, b.contextLine))
			}
			for _, line := range strings.SplitAfter(b.context, "\n") {
				if strings.HasPrefix(line, "import ") || line == wrapper+"\n" {
					line = "\n" // its line stays, so the lines after it keep their numbers
				}
				out.WriteString(line)
			}
		}
		return out.String()
	}
	split := -1
	var f *ast.File
	for _, i := range append([]int{len(lines), 0}, seq(1, len(lines))...) {
		var err error
		if f, err = parser.ParseFile(token.NewFileSet(), "", "package docblock\n"+compose(i, false), 0); err == nil {
			split = i
			break
		}
	}
	if split < 0 {
		return "package docblock\n" + at(0) + b.text // the compiler says what does not parse
	}
	have := map[string]bool{}
	for _, s := range f.Imports {
		have[importName(s)] = true
	}
	need := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil && known[id.Name] != "" && !have[id.Name] {
				need[id.Name] = true
			}
		}
		return true
	})
	var header []string
	for _, line := range strings.Split(b.context, "\n") {
		if strings.HasPrefix(line, "import ") {
			header = append(header, line) // hoisted: imports come first
		}
	}
	for name := range need {
		header = append(header, fmt.Sprintf("import %s %q", name, known[name]))
	}
	sort.Strings(header)
	src := compose(split, true)
	if len(f.Imports) > 0 && len(header) > 0 {
		// The block's own imports must come first: add the missing ones after them.
		return "package docblock\n" + addImports(src, header)
	}
	return strings.Join(append([]string{"package docblock"}, header...), "; ") + "\n" + src
}

// seq is from, from+1, ..., to-1.
func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// addImports puts import lines right after a block's own last import, on that same line so
// the lines after it keep their numbers.
func addImports(text string, header []string) string {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package docblock\n"+text, parser.ImportsOnly)
	if err != nil || len(f.Decls) == 0 {
		return text
	}
	fset := token.NewFileSet()
	f, _ = parser.ParseFile(fset, "", "package docblock\n"+text, parser.ImportsOnly)
	last := f.Decls[len(f.Decls)-1]
	end := fset.Position(last.End()).Offset - len("package docblock\n")
	return text[:end] + "; " + strings.Join(header, "; ") + text[end:]
}

func importName(s *ast.ImportSpec) string {
	if s.Name != nil {
		return s.Name.Name
	}
	p := strings.Trim(s.Path.Value, `"`)
	return p[strings.LastIndex(p, "/")+1:]
}

// firstCode is the first line of a block that is not blank or a comment.
func firstCode(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") {
			return l
		}
	}
	return ""
}

// TestEveryExportedIdentifierHasGodoc fails on a package of the library without a package
// comment, and on an exported function, method, type, constant or variable without a doc
// comment (a const or var in a documented group is documented by the group's comment).
func TestEveryExportedIdentifierHasGodoc(t *testing.T) {
	libs := loadLibrary(t)
	var missing []string
	fset := token.NewFileSet()
	for _, l := range libs {
		if !isLibrary(l.path) || strings.HasPrefix(l.path, "sigs.k8s.io") {
			continue
		}
		documented := false
		files := make([]string, 0, len(l.files))
		for file := range l.files {
			files = append(files, file)
		}
		sort.Strings(files)
		for _, file := range files {
			f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil {
				documented = true
			}
			at := func(p token.Pos) string {
				pos := fset.Position(p)
				return fmt.Sprintf("%s:%d", rel(pos.Filename), pos.Line)
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() || d.Doc != nil {
						continue
					}
					name := d.Name.Name
					if d.Recv != nil {
						recv := receiver(d)
						if !ast.IsExported(recv) {
							continue
						}
						name = recv + "." + name
					}
					missing = append(missing, fmt.Sprintf("%s: %s.%s has no godoc: add `// %s ...` above it",
						at(d.Pos()), l.name, name, d.Name.Name))
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() && s.Doc == nil && (d.Doc == nil || d.Lparen.IsValid()) {
								missing = append(missing, fmt.Sprintf("%s: type %s.%s has no godoc: add `// %s ...` above it",
									at(s.Pos()), l.name, s.Name.Name, s.Name.Name))
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() && s.Doc == nil && s.Comment == nil && d.Doc == nil {
									missing = append(missing, fmt.Sprintf("%s: %s.%s has no godoc: add `// %s ...` above it, or a comment over its group",
										at(n.Pos()), l.name, n.Name, n.Name))
								}
							}
						}
					}
				}
			}
		}
		if !documented {
			missing = append(missing, fmt.Sprintf("%s: package %s has no package comment: add `// Package %s ...` above a package clause (doc.go)",
				rel(l.dir), l.path, l.name))
		}
	}
	sort.Strings(missing)
	left := maps.Clone(pending)
	for _, m := range missing {
		if id := m[strings.Index(m, ": ")+2:]; left[strings.Fields(id)[0]] {
			delete(left, strings.Fields(id)[0])
			t.Logf("pending elsewhere: %s", m)
			continue
		}
		t.Error(m)
	}
	for id := range left {
		t.Errorf("internal/docs/docs_test.go: %s has godoc now: remove it from pending", id)
	}
}

// TestEveryPackageHasAnExample fails on a package of the library without a runnable
// Example function in its tests: godoc shows a user how to call it.
func TestEveryPackageHasAnExample(t *testing.T) {
	libs := loadLibrary(t)
	var names []string
	for name := range libs {
		names = append(names, name)
	}
	sort.Strings(names)
	left := maps.Clone(pendingExamples)
	for _, name := range names {
		l := libs[name]
		if slices.ContainsFunc(slices.Collect(maps.Keys(l.names)), func(n string) bool { return strings.HasPrefix(n, "Example") }) {
			continue
		}
		if left[l.path] {
			delete(left, l.path)
			t.Logf("pending elsewhere: package %s has no Example", l.path)
			continue
		}
		t.Errorf("%s: package %s has no runnable Example: add an example_test.go with "+
			"func Example() or func ExampleName() (and // Output: where the output is deterministic)", rel(l.dir), l.path)
	}
	for path := range left {
		t.Errorf("internal/docs/docs_test.go: %s has an Example now: remove it from pendingExamples", path)
	}
}

// pendingExamples are the packages without an Example that another change is rewriting.
var pendingExamples = map[string]bool{}

// pending are the undocumented identifiers of packages another change is rewriting; each
// is taken off once that change lands (the test fails when one is documented and still here).
var pending = map[string]bool{}

// docs/reliability.md lists the scenarios make test-reliability runs, one table row each:
// every top-level test of test/reliability and every fuzz target hack/fuzz-targets.sh
// finds in the code, no more and no fewer.
func TestReliabilityListsEveryScenarioAndFuzzTarget(t *testing.T) {
	inCode := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(root, "test", "reliability", "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tests in test/reliability (%v)", err)
	}
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && isTest(fn) {
				inCode["`"+fn.Name.Name+"`"] = true
			}
		}
	}
	cmd := exec.Command("hack/fuzz-targets.sh")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	targets, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/fuzz-targets.sh: %v", err)
	}
	for line := range strings.Lines(string(targets)) {
		pkg, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			t.Fatalf("hack/fuzz-targets.sh printed %q, want PACKAGE NAME", line)
		}
		inCode["`"+name+"` ("+strings.TrimPrefix(pkg, "./")+")"] = true
	}

	page := filepath.Join(root, "docs", "reliability.md")
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| [^|]+ \\| (`(?:Test|Fuzz)\\w+`(?: \\(\\w+\\))?) \\|")
	inDocs := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(text), -1) {
		inDocs[m[1]] = true
	}
	for _, s := range slices.Sorted(maps.Keys(inCode)) {
		if !inDocs[s] {
			t.Errorf("%s: no row for %s, which make test-reliability runs", rel(page), s)
		}
	}
	for _, s := range slices.Sorted(maps.Keys(inDocs)) {
		if !inCode[s] {
			t.Errorf("%s: a row for %s, which is not in the code (renamed, moved or removed?)", rel(page), s)
		}
	}
}

// isTest reports whether fn is a top-level test go test runs: TestXxx(t *testing.T).
func isTest(fn *ast.FuncDecl) bool {
	if !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" || len(fn.Type.Params.List) != 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}
