package layout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/reconcilekit/reconcilekit"

// rule is one line of the imports block: the packages it matches and what they may import.
type rule struct {
	line    int
	pattern string
	allowed []string // patterns; {x} is replaced by what the package's {x} matched
}

// match reports whether pkg matches pattern, and what {x} stood for.
func match(pattern, pkg string) (ok bool, x string) {
	p, q := strings.Split(pattern, "/"), strings.Split(pkg, "/")
	if len(p) != len(q) {
		return false, ""
	}
	for i := range p {
		switch p[i] {
		case "*":
		case "{x}":
			x = q[i]
		default:
			if p[i] != q[i] {
				return false, ""
			}
		}
	}
	return true, x
}

// readRules reads the imports block of docs/architecture.md.
func readRules(t *testing.T, path string) []rule {
	t.Helper()
	var rules []rule
	for _, l := range readBlock(t, path, "imports", "package: what it may import") {
		r := rule{line: l.n, pattern: l.key}
		for _, a := range strings.Fields(l.value) {
			if a != "-" {
				r.allowed = append(r.allowed, a)
			}
		}
		rules = append(rules, r)
	}
	return rules
}

// A blockLine is one `key: value` line of a fenced block of docs/architecture.md.
type blockLine struct {
	n          int
	key, value string
}

// readBlock reads the lines of the fenced block of the given info string in the file at
// path, each `key: value` as form says; it fails the test on another line, or on no block.
func readBlock(t *testing.T, path, info, form string) []blockLine {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []blockLine
	in := false
	s := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		switch {
		case line == "```"+info:
			in = true
		case in && line == "```":
			in = false
		case in:
			key, value, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("%s:%d: %q is not `%s`", path, n, line, form)
			}
			lines = append(lines, blockLine{n, strings.TrimSpace(key), strings.TrimSpace(value)})
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s has no ```%s block", path, info)
	}
	return lines
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// modules returns the directories of the checkout's Go modules, root first: the library's
// and every nested one (the examples', the tests', the tools'), so that a package cannot
// leave the picture by moving into a module of its own.
func modules(t *testing.T, root string) []string {
	t.Helper()
	dirs := []string{root}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			if name := d.Name(); name == "testdata" || name == "bin" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				dirs = append(dirs, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// listPackages runs go list -deps's view of every package of every module of the checkout
// at root, each in its module's directory.
func listPackages(t *testing.T, root string) map[string]pkg {
	t.Helper()
	pkgs := map[string]pkg{}
	for _, dir := range modules(t, root) {
		cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...")
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.Bytes())
		}
		for d := json.NewDecoder(bytes.NewReader(out)); d.More(); {
			var p pkg
			if err := d.Decode(&p); err != nil {
				t.Fatal(err)
			}
			pkgs[strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")] = p
		}
	}
	return pkgs
}

// ours returns the module's packages among paths, relative to the module, and testing.
func ours(paths []string) []string {
	var r []string
	for _, p := range paths {
		switch {
		case p == "testing":
			r = append(r, p)
		case strings.HasPrefix(p, module+"/"):
			r = append(r, strings.TrimPrefix(p, module+"/"))
		}
	}
	return r
}

// check returns what is wrong with pkgs against rules, one line each.
func check(rules []rule, pkgs map[string]pkg) []string {
	var problems []string
	ruleOf := map[string]rule{}
	xOf := map[string]string{}
	used := map[int]map[string]bool{} // rule line: allowed patterns some package imports
	for name := range pkgs {
		for _, r := range rules {
			if ok, x := match(r.pattern, name); ok {
				ruleOf[name], xOf[name] = r, x
				break
			}
		}
		if _, ok := ruleOf[name]; !ok {
			problems = append(problems, fmt.Sprintf("package %s has no line: add one saying what it may import", name))
		}
	}
	allows := func(name, imp string) (string, bool) {
		r := ruleOf[name]
		for _, a := range r.allowed {
			a = strings.ReplaceAll(a, "{x}", xOf[name])
			if ok, _ := match(a, imp); ok {
				return a, true
			}
		}
		return "", false
	}
	for name, p := range pkgs {
		r, ok := ruleOf[name]
		if !ok {
			continue
		}
		if used[r.line] == nil {
			used[r.line] = map[string]bool{}
		}
		for _, imp := range ours(p.Imports) {
			a, ok := allows(name, imp)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s imports %s, which its line (%d, %s) does not allow", name, imp, r.line, r.pattern))
				continue
			}
			for _, orig := range r.allowed {
				if strings.ReplaceAll(orig, "{x}", xOf[name]) == a {
					used[r.line][orig] = true
				}
			}
		}
		// testing comes only through a package whose line allows it.
		if slices.Contains(p.Deps, "testing") && !linksTestingAllowed(name, pkgs, ruleOf, map[string]bool{}) {
			problems = append(problems, fmt.Sprintf("%s links testing, though neither its line (%d) nor any package it imports allows it", name, r.line))
		}
	}
	for _, r := range rules {
		matched := false
		for name := range pkgs {
			if ruleOf[name].line == r.line {
				matched = true
			}
		}
		if !matched {
			problems = append(problems, fmt.Sprintf("line %d, %s, matches no package: remove it", r.line, r.pattern))
			continue
		}
		for _, a := range r.allowed {
			if !used[r.line][a] {
				problems = append(problems, fmt.Sprintf("line %d: no package of %s imports %s: remove it from the line", r.line, r.pattern, a))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// linksTestingAllowed reports whether name's line, or the line of a package of the module it
// imports, directly or not, allows testing.
func linksTestingAllowed(name string, pkgs map[string]pkg, ruleOf map[string]rule, seen map[string]bool) bool {
	if seen[name] {
		return false
	}
	seen[name] = true
	if slices.Contains(ruleOf[name].allowed, "testing") {
		return true
	}
	for _, imp := range ours(pkgs[name].Imports) {
		if _, ok := pkgs[imp]; ok && linksTestingAllowed(imp, pkgs, ruleOf, seen) {
			return true
		}
	}
	return false
}

func TestArchitecturePictureMatchesTheImports(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range check(readRules(t, filepath.Join(root, "docs", "architecture.md")), listPackages(t, root)) {
		t.Error(problem + " (docs/architecture.md, the imports block)")
	}
}

// TestCheckFindsEveryKindOfDrift proves the check can fail: a made-up module against
// made-up lines, one drift of each kind.
func TestCheckFindsEveryKindOfDrift(t *testing.T) {
	rules := []rule{
		{line: 1, pattern: "conditions"},
		{line: 2, pattern: "reconcile", allowed: []string{"conditions", "requeue"}},
		{line: 3, pattern: "examples/{x}/controller", allowed: []string{"reconcile", "examples/{x}/api"}},
		{line: 4, pattern: "examples/{x}/api"},
		{line: 5, pattern: "reconciletest", allowed: []string{"reconcile", "testing"}},
		{line: 6, pattern: "rehearsal", allowed: []string{"reconciletest"}},
		{line: 7, pattern: "gone"},
	}
	m := func(s ...string) []string {
		var r []string
		for _, p := range s {
			if p != "testing" {
				p = module + "/" + p
			}
			r = append(r, p)
		}
		return r
	}
	pkgs := map[string]pkg{
		"conditions":             {},
		"reconcile":              {Imports: m("conditions", "sharding")},           // sharding not allowed; requeue unused
		"examples/at/controller": {Imports: m("reconcile", "examples/podset/api")}, // another example's API
		"examples/at/api":        {},
		"examples/podset/api":    {},
		"reconciletest":          {Imports: m("reconcile", "testing"), Deps: m("testing")},     // allowed
		"rehearsal":              {Imports: m("reconciletest"), Deps: m("testing")},            // allowed through reconciletest
		"sharding":               {Imports: m("reconcile"), Deps: m("testing")},                // no line; links testing
		"explain":                {Imports: []string{"fmt"}, Deps: []string{"fmt", "testing"}}, // no line either
	}
	pkgs["examples/at/controller"] = pkg{Imports: pkgs["examples/at/controller"].Imports, Deps: m("testing")}
	want := []string{
		"examples/at/controller imports examples/podset/api, which its line (3, examples/{x}/controller) does not allow",
		"examples/at/controller links testing, though neither its line (3) nor any package it imports allows it",
		"line 3: no package of examples/{x}/controller imports examples/{x}/api: remove it from the line",
		"line 7, gone, matches no package: remove it",
		"line 2: no package of reconcile imports requeue: remove it from the line",
		"package explain has no line: add one saying what it may import",
		"package sharding has no line: add one saying what it may import",
		"reconcile imports sharding, which its line (2, reconcile) does not allow",
	}
	slices.Sort(want)
	if got := check(rules, pkgs); !slices.Equal(got, want) {
		t.Errorf("check found\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}
