package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// What a rename changes:
//
//   - The module path and the API group, wherever they appear; the group's first label
//     also in the API package's import name (cachev1alpha1, batchv1), the sample's file name and
//     PROJECT, and its domain in PROJECT.
//   - The kind, as a word: in Go, the identifiers the template declares (Memcached,
//     MemcachedSpec, TestMemcachedScales, podSet...), also where a comment names them,
//     and the lower-case ones (the logic's type, variables: memcached, podSet, podSets);
//     in names (string literals and YAML values without a space: labels, container and
//     port names, the event recorder, the field owner, the user of the
//     tests, the leader election ID, AwaitReconciles' controller name, RBAC resources,
//     kustomize's namespace and prefix); in file names; and in prose (comments, messages)
//     as a capitalized word, with its article (a Redis, an At), as its plural (patch on
//     keyvals), and in lower case where it is neither English nor what the operator runs
//     (the keyval servers).
//
// What it drops: the template's short name and its category (see resourceMarker), and
// the tests it ports from upstream (see upstreamTests).
//
// What it keeps: the lower-case kind as a word of prose where it is English ("at") or
// the name of what the operator runs ("memcached pods"); a capitalized kind that opens a
// sentence in the middle of a comment ("... is not. At most 64 characters."); and what
// the operator runs, the image and the command, which are the new operator's to change.

// upstreamTests ends the names of a template's tests that are ported from the project it
// rebuilds (the kubebuilder tutorial's, Kubernetes' CronJob controller's): they prove the
// example faithful to its original, which a new operator is not, and are not copied.
const upstreamTests = "_upstream_test.go"

// renamer renames one example's module, group and kind.
type renamer struct {
	oldModule, newModule string
	oldGroup, newGroup   string // cache.example.com, cache.acme.io
	oldFirst, newFirst   string // the groups' first labels: cache, cache
	oldKind, newKind     word
	idents               map[string]string // Go identifiers the template declares, renamed
	// keepLower keeps the lower-case kind where it is a word of prose: it names what the
	// operator runs (memcached), or it is English (at).
	keepLower bool
}

// english are the kinds of the templates that are English words in lower case.
var english = map[string]bool{"at": true}

// A word is a kind in each of its forms.
type word struct{ kind, lower, plural, pluralKind string } // Memcached, memcached, memcacheds, Memcacheds

func newWord(kind, plural string) word {
	lower := strings.ToLower(kind)
	// The capitalized plural: the kind, then the plural's own ending (Policy, policies:
	// Policies).
	common := 0
	for common < len(lower) && common < len(plural) && lower[common] == plural[common] {
		common++
	}
	return word{kind: kind, lower: lower, plural: plural, pluralKind: kind[:common] + plural[common:]}
}

// Placeholders stand for the module and the group while the kind is renamed, so that a
// kind's name inside them (github.com/acme/memcached-operator) is left alone.
const (
	modulePlaceholder = "QQQmoduleQQQ"
	groupPlaceholder  = "QQQgroupQQQ"
	firstPlaceholder  = "QQQfirstQQQ"  // the group's first label, in a sample's file name
	dashedPlaceholder = "QQQdashedQQQ" // the group with dashes for dots, in a webhook's path
)

// create copies the template to o.dir, renamed, with a go.mod of its own and the build
// tools of the library.
func create(o options) error {
	if _, err := os.Stat(o.dir); err == nil {
		return fmt.Errorf("%s exists already", o.dir)
	}
	files, err := templateFiles(o.lib, o.source())
	if err != nil {
		return err
	}
	project := files["PROJECT"]
	oldModule, oldFirst, domain, oldKind := field(project, "repo"), field(project, "group"), field(project, "domain"), field(project, "kind")
	if oldModule == "" || oldFirst == "" || domain == "" || oldKind == "" {
		return fmt.Errorf("the PROJECT file of template %s names no repo, group, domain or kind", o.source())
	}
	r := &renamer{
		oldModule: oldModule, newModule: o.module,
		oldGroup: oldFirst + "." + domain, newGroup: o.group,
		oldFirst: oldFirst, newFirst: strings.SplitN(o.group, ".", 2)[0],
		oldKind: newWord(oldKind, plural(strings.ToLower(oldKind))), newKind: newWord(o.kind, o.plural),
	}
	if _, ok := files["config/crd/bases/"+r.oldGroup+"_"+r.oldKind.plural+".yaml"]; !ok {
		return fmt.Errorf("the template's resource is not %s: it has no config/crd/bases/%s_%s.yaml", r.oldKind.plural, r.oldGroup, r.oldKind.plural)
	}
	if err := r.declared(files); err != nil {
		return err
	}

	out := map[string][]byte{}
	for rel, data := range files {
		renamed, err := r.file(rel, data)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		out[r.path(rel)] = renamed
	}
	if err := tools(o, out); err != nil {
		return err
	}
	if _, ok := out["Makefile"]; !ok {
		out["Makefile"] = []byte(makefileFor(files["config/crd/bases/"+r.oldGroup+"_"+r.oldKind.plural+".yaml"]))
	}
	if err := goMod(o, out); err != nil {
		return err
	}
	for rel, data := range out {
		target := filepath.Join(o.dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// field returns the first value of a top-level or indented "key: value" line of a
// kubebuilder PROJECT file.
func field(project []byte, key string) string {
	for _, line := range strings.Split(string(project), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// declared finds the Go identifiers of the template that name the kind: the types and
// functions (not methods) it declares with the kind as a word of their name, the lower-case kind
// itself, and the API package's import name. It refuses a kind whose lower-case form
// would clash with a package the template imports.
func (r *renamer) declared(files map[string][]byte) error {
	r.keepLower = english[r.oldKind.lower]
	r.idents = map[string]string{
		r.oldKind.lower: r.newKind.lower,
		// A kind of two words names its variables in lower camel case (podSet, podSets).
		lowerFirst(r.oldKind.kind):       lowerFirst(r.newKind.kind),
		lowerFirst(r.oldKind.pluralKind): lowerFirst(r.newKind.pluralKind),
	}
	// The API package of each version is imported as the group's first label and the
	// version (cachev1alpha1, batchv1).
	for rel := range files {
		if dir, ok := strings.CutPrefix(path.Dir(rel), "api/"); ok && !strings.Contains(dir, "/") {
			r.idents[r.oldFirst+dir] = identifier(r.newFirst) + dir
		}
	}
	imports := map[string]bool{}
	fset := token.NewFileSet()
	for rel, data := range files {
		if !strings.HasSuffix(rel, ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, rel, data, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = true
		}
		keep := map[ast.Node]bool{}
		keepRuns(f, keep)
		for n := range keep {
			if lit, ok := n.(*ast.BasicLit); ok && r.textAfter(strings.ToLower(lit.Value), false, 0) != strings.ToLower(lit.Value) {
				r.keepLower = true // the kind is a word of what the operator runs
			}
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				// A method keeps its name: it may satisfy another package's interface
				// (GetLastHandledReconcileAt, reconcile.RequestStatus), whose "At" is no kind.
				if decl.Recv == nil {
					r.declare(decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					if spec, ok := spec.(*ast.TypeSpec); ok {
						r.declare(spec.Name.Name)
					}
				}
			}
		}
	}
	if imports[r.newKind.lower] || token.IsKeyword(r.newKind.lower) {
		return fmt.Errorf("kind %s: %q, the name of the logic's type, is a Go keyword or a package the template imports; choose another kind",
			r.newKind.kind, r.newKind.lower)
	}
	return nil
}

// declare adds a declared name to the identifiers to rename if the kind is a word of it,
// also as the first word of an unexported name (podSetLabels).
func (r *renamer) declare(name string) {
	if renamed := r.camel(name); renamed != name {
		r.idents[name] = renamed
	} else if upper := strings.ToUpper(name[:1]) + name[1:]; upper != name && strings.HasPrefix(upper, r.oldKind.kind) {
		if renamed := r.camel(upper); renamed != upper {
			r.idents[name] = lowerFirst(renamed)
		}
	}
}

// lowerFirst is s with its first letter in lower case: PodSet, podSet.
func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// identifier makes a group's first label a Go identifier: cnat-v2 becomes cnatv2.
func identifier(label string) string { return strings.ReplaceAll(label, "-", "") }

// path renames a file's path: the kind in its lower-case forms, the group and its first
// label (cache.example.com_memcacheds.yaml, cache_v1beta1_memcached.yaml, memcached_types.go).
func (r *renamer) path(rel string) string {
	rel = strings.ReplaceAll(rel, r.oldGroup+"_", groupPlaceholder+"_")
	rel = strings.ReplaceAll(rel, r.oldFirst+"_v1", firstPlaceholder+"_v1")
	return r.restore(r.text(rel, false))
}

// file renames one file's content.
func (r *renamer) file(rel string, data []byte) ([]byte, error) {
	s := strings.ReplaceAll(string(data), r.oldModule, modulePlaceholder)
	s = strings.ReplaceAll(s, r.oldGroup, groupPlaceholder)
	s = strings.ReplaceAll(s, dashed(r.oldGroup), dashedPlaceholder) // /mutate-cache-example-com-v1beta1-memcached
	s = strings.ReplaceAll(s, r.oldFirst+"_v1", firstPlaceholder+"_v1")
	switch {
	case strings.HasSuffix(rel, ".go"):
		out, err := r.goFile(rel, s)
		if err != nil {
			return nil, err
		}
		return format.Source([]byte(r.restore(out))) // sorts the imports of each group too
	case strings.HasPrefix(rel, "config/crd/bases/"):
		s = crdNames(s)
	case rel == "PROJECT":
		s = strings.ReplaceAll(s, "group: "+r.oldFirst+"\n", "group: "+r.newFirst+"\n")
		s = strings.ReplaceAll(s, "domain: "+strings.TrimPrefix(r.oldGroup, r.oldFirst+".")+"\n",
			"domain: "+strings.TrimPrefix(r.newGroup, r.newFirst+".")+"\n")
	}
	return []byte(r.restore(r.yaml(s))), nil
}

func (r *renamer) restore(s string) string {
	s = strings.ReplaceAll(s, modulePlaceholder, r.newModule)
	s = strings.ReplaceAll(s, firstPlaceholder, r.newFirst)
	s = strings.ReplaceAll(s, dashedPlaceholder, dashed(r.newGroup))
	return strings.ReplaceAll(s, groupPlaceholder, r.newGroup)
}

// dashed writes a group as the webhook paths of controller-gen's markers do.
func dashed(group string) string { return strings.ReplaceAll(group, ".", "-") }

// goFile renames a Go file: identifiers through its syntax tree, strings as names or
// prose, comments as prose (markers as names, but for their quoted descriptions).
func (r *renamer) goFile(rel, src string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	// Packages of other modules: a selector of theirs (requeue.At) is theirs, not the kind.
	foreign := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(p, modulePlaceholder) {
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			foreign[name] = true
		}
	}
	keep := map[ast.Node]bool{} // what the operator runs, and import paths
	for _, imp := range f.Imports {
		keep[imp.Path] = true
	}
	keepRuns(f, keep)
	ast.Inspect(f, func(n ast.Node) bool {
		if n, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := n.X.(*ast.Ident); ok && foreign[x.Name] {
				keep[n.Sel] = true
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if renamed, ok := r.idents[n.Name]; ok && !keep[n] {
				n.Name = renamed
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && !keep[n] {
				n.Value = r.text(n.Value, strings.Contains(n.Value, " "))
			}
		}
		return true
	})
	for _, group := range f.Comments {
		prev := byte(0)
		for _, c := range group.List {
			c.Text = r.comment(c.Text, prev)
			if t := strings.TrimRight(c.Text, " \t/*"); t != "" {
				prev = t[len(t)-1]
			}
		}
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// keepRuns adds to keep the strings of f that say what the operator runs.
func keepRuns(f *ast.File, keep map[ast.Node]bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr: // Image: ..., Command: []string{...}, Args: ...
			if k, ok := n.Key.(*ast.Ident); ok && runs(k.Name) {
				keepAll(n.Value, keep)
			}
		case *ast.ValueSpec: // const Image = "memcached:1.4.36-alpine"
			for i, name := range n.Names {
				if runs(name.Name) && i < len(n.Values) {
					keepAll(n.Values[i], keep)
				}
			}
		case *ast.AssignStmt: // c.Image = "memcached:latest"
			for i, lhs := range n.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && runs(sel.Sel.Name) && i < len(n.Rhs) {
					keepAll(n.Rhs[i], keep)
				}
			}
		}
		return true
	})
}

// runs reports whether a field or constant names what the operator runs.
func runs(name string) bool { return name == "Image" || name == "Command" || name == "Args" }

// keepAll keeps the strings of n; its identifiers (at.Spec.Command) are renamed as
// everywhere.
func keepAll(n ast.Node, keep map[ast.Node]bool) {
	ast.Inspect(n, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok {
			keep[lit] = true
		}
		return true
	})
}

// comment renames a comment line: prose, but for a marker (// +kubebuilder:...), whose
// words are names, except those of its quoted descriptions. The resource marker gets the
// plural, pinned.
func (r *renamer) comment(text string, prev byte) string {
	body := strings.TrimPrefix(text, "//")
	if !strings.HasPrefix(strings.TrimSpace(body), "+") {
		return "//" + r.prose(r.commentIdents(body), prev)
	}
	parts := strings.Split(body, `"`)
	for i := range parts {
		parts[i] = r.text(parts[i], i%2 == 1) // inside quotes: prose
	}
	body = strings.Join(parts, `"`)
	if rest, ok := strings.CutPrefix(body, " +kubebuilder:resource:"); ok {
		body = " +kubebuilder:resource:" + r.resourceMarker(rest)
	}
	return "//" + body
}

// commentIdents renames in a comment the identifiers the template declares that the kind
// is a word of (TestMemcachedScales, podSets), but for the kind itself, which is prose
// there.
func (r *renamer) commentIdents(body string) string {
	var b strings.Builder
	for i := 0; i < len(body); {
		j := i
		for j < len(body) && (isAlnum(body[j]) || body[j] == '_') {
			j++
		}
		if j == i {
			b.WriteByte(body[i])
			i++
			continue
		}
		word := body[i:j]
		if renamed, ok := r.idents[word]; ok && word != r.oldKind.kind && word != r.oldKind.pluralKind && word != r.oldKind.lower {
			word = renamed
		}
		b.WriteString(word)
		i = j
	}
	return b.String()
}

// resourceMarker renames the arguments of a +kubebuilder:resource marker: the plural
// pinned with path=, and neither the template's short name, which another CRD of the
// cluster (the template's own) may claim, nor its category, which lists the examples
// (kubectl get reconcilekit-examples) and not a new operator's kinds.
func (r *renamer) resourceMarker(args string) string {
	kept := []string{}
	if !strings.Contains(args, "path=") {
		kept = append(kept, "path="+r.newKind.plural)
	}
	for _, arg := range strings.Split(args, ",") {
		key, value, _ := strings.Cut(arg, "=")
		switch key {
		case "":
			continue
		case "shortName":
			continue
		case "categories":
			var categories []string
			for _, c := range strings.Split(value, ";") {
				if c != exampleCategory {
					categories = append(categories, c)
				}
			}
			if len(categories) == 0 {
				continue
			}
			arg = key + "=" + strings.Join(categories, ";")
		}
		kept = append(kept, arg)
	}
	return strings.Join(kept, ",")
}

// exampleCategory is the category of the examples' kinds, which a copy's kind leaves.
const exampleCategory = "reconcilekit-examples"

// crdNames drops from a generated CRD what resourceMarker drops from its marker: the
// short names and the examples' category, so that the CRD is what controller-gen makes
// of the renamed marker.
func crdNames(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		indent := len(lines[i]) - len(trimmed)
		if trimmed != "categories:" && trimmed != "shortNames:" {
			out = append(out, lines[i])
			continue
		}
		// The list's items follow at the same indentation (controller-gen's style) or
		// deeper.
		var items []string
		for i+1 < len(lines) && strings.HasPrefix(strings.TrimLeft(lines[i+1], " "), "- ") &&
			len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) >= indent {
			i++
			if trimmed == "categories:" && strings.TrimSpace(strings.TrimLeft(lines[i], " ")[2:]) != exampleCategory {
				items = append(items, lines[i])
			}
		}
		if len(items) > 0 {
			out = append(out, strings.Repeat(" ", indent)+trimmed)
			out = append(out, items...)
		}
	}
	return strings.Join(out, "\n")
}

// yaml renames a YAML file (or PROJECT) line by line: a comment, or a value with a
// space, is prose; a key or a value without one is a name.
func (r *renamer) yaml(s string) string {
	lines := strings.Split(s, "\n")
	prev := byte(0)
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(trimmed)]
		switch {
		case strings.HasPrefix(trimmed, "#"):
			lines[i] = indent + r.prose(trimmed, prev)
		default:
			// A key has no space; "spec.replicas: kubectl scale sets it" is prose.
			key, value, ok := strings.Cut(trimmed, ": ")
			if !ok || strings.Contains(key, " ") {
				key, value, ok = "", trimmed, false
			}
			prose := strings.Contains(strings.TrimPrefix(value, "- "), " ")
			after := prev
			if ok {
				key, after = r.text(key, false)+": ", ':'
			}
			lines[i] = indent + key + r.textAfter(value, prose, after)
		}
		if t := strings.TrimRight(lines[i], " "); t != "" {
			prev = t[len(t)-1]
		}
	}
	return strings.Join(lines, "\n")
}

// text renames the kind in s, as prose or as names.
func (r *renamer) text(s string, prose bool) string { return r.textAfter(s, prose, 0) }

// prose renames the kind in prose that follows the character prev.
func (r *renamer) prose(s string, prev byte) string { return r.textAfter(s, true, prev) }

// textAfter renames the kind in s, which follows the character prev (0 for none).
//
// A capitalized kind is renamed where it is a word of its own (not Attach), with its
// article; in prose not where it opens a sentence after another (At most), which may be
// English. A lower-case kind is renamed in names, and in prose only within a compound
// name (memcached-operator, at-system), as alone it may be English (at) or the name of
// what the operator runs (memcached); its plural is a resource's name (patch on keyvals),
// renamed in prose too.
func (r *renamer) textAfter(s string, prose bool, prev byte) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		before := prev
		if i > 0 {
			before = s[i-1]
		}
		old, replacement, ok := r.match(s, i, before, prose)
		if !ok {
			b.WriteByte(s[i])
			i++
			continue
		}
		if prose && replacement[0] >= 'A' && replacement[0] <= 'Z' {
			fixArticle(&b, replacement)
		}
		b.WriteString(replacement)
		i += len(old)
	}
	return b.String()
}

// match returns the form of the old kind that starts s[i:], if one does as a word, and
// what replaces it.
func (r *renamer) match(s string, i int, before byte, prose bool) (string, string, bool) {
	forms := [][2]string{
		{r.oldKind.pluralKind, r.newKind.pluralKind}, {r.oldKind.kind, r.newKind.kind},
		{r.oldKind.plural, r.newKind.plural}, {r.oldKind.lower, r.newKind.lower},
	}
	for _, f := range forms {
		old := f[0]
		// At i == 0, before ends the line or text before s: a kind that opens a wrapped
		// line of a YAML description (after "and the") is a word of its own.
		if !strings.HasPrefix(s[i:], old) || i > 0 && isAlnum(before) {
			continue
		}
		after := byte(0)
		if i+len(old) < len(s) {
			after = s[i+len(old)]
		}
		capital := old[0] >= 'A' && old[0] <= 'Z'
		switch {
		case capital && (isLower(after) || isDigit(after)):
			continue // Attach, At2
		case !capital && isAlnum(after):
			continue // attach
		case capital && prose && opensSentence(s[:i], before):
			continue
		case !capital && prose && old != r.oldKind.plural && r.keepLower && !compound(s, i, len(old)):
			continue
		}
		return old, f[1], true
	}
	return "", "", false
}

// opensSentence reports whether a word after head (which follows prev) starts a
// sentence after another one.
func opensSentence(head string, prev byte) bool {
	t := strings.TrimRight(head, " \t/#")
	if t == "" {
		return prev == '.' || prev == '!' || prev == '?'
	}
	last := t[len(t)-1]
	return last == '.' || last == '!' || last == '?'
}

// compound reports whether the word s[i:i+n] is joined to another by - _ . or /.
func compound(s string, i, n int) bool {
	joiner := func(c byte) bool { return c == '-' || c == '_' || c == '.' || c == '/' }
	if i >= 2 && joiner(s[i-1]) && isAlnum(s[i-2]) {
		return true
	}
	return i+n+1 < len(s) && joiner(s[i+n]) && isAlnum(s[i+n+1])
}

// fixArticle makes the article just written before a kind the one its new name takes.
func fixArticle(b *strings.Builder, kind string) {
	written := b.String()
	article := "a "
	if strings.ContainsRune("AEIOU", rune(kind[0])) {
		article = "an "
	}
	for _, old := range []string{"a ", "an ", "A ", "An "} {
		if rest, ok := strings.CutSuffix(written, old); ok && (rest == "" || !isAlnum(rest[len(rest)-1])) {
			if old[0] == 'A' {
				article = strings.ToUpper(article[:1]) + article[1:]
			}
			b.Reset()
			b.WriteString(rest + article)
			return
		}
	}
}

// camel renames the kind where it is first a word of a Go identifier: TestDeletingAMemcached,
// MemcachedList, TestConvergedAtsMake, with its article (TestDeletingAnAt: ARedis). Only
// the first: a test's name says its subject first, and later words may be English
// (TestAtWithAPastScheduleRunsItsCommandAtOnce).
func (r *renamer) camel(name string) string {
	var b strings.Builder
	renamed := false
	for i := 0; i < len(name); {
		if renamed {
			b.WriteString(name[i:])
			break
		}
		matched := false
		for _, f := range [][2]string{{r.oldKind.pluralKind, r.newKind.pluralKind}, {r.oldKind.kind, r.newKind.kind}} {
			old := f[0]
			if !strings.HasPrefix(name[i:], old) || i+len(old) < len(name) && isLower(name[i+len(old)]) {
				continue
			}
			written := b.String()
			an := strings.ContainsRune("AEIOU", rune(f[1][0]))
			switch {
			case strings.HasSuffix(written, "An") && !an:
				b.Reset()
				b.WriteString(strings.TrimSuffix(written, "An") + "A")
			case strings.HasSuffix(written, "A") && !strings.HasSuffix(written, "An") && an && i > 1:
				b.WriteString("n")
			}
			b.WriteString(f[1])
			i += len(old)
			matched, renamed = true, true
			break
		}
		if !matched {
			b.WriteByte(name[i])
			i++
		}
	}
	return b.String()
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isLower(c) || isDigit(c) || c >= 'A' && c <= 'Z' }

// tools adds hack/tools, the module that pins the build tools, from the library: its
// go.mod and go.sum under the new module's path, and a README of the copy's own.
func tools(o options, out map[string][]byte) error {
	mod, err := fs.ReadFile(o.lib, "hack/tools/go.mod")
	if err != nil {
		return err
	}
	sum, err := fs.ReadFile(o.lib, "hack/tools/go.sum")
	if err != nil {
		return err
	}
	first, rest, _ := strings.Cut(string(mod), "\n")
	if !strings.HasPrefix(first, "module ") {
		return errors.New("hack/tools/go.mod does not start with its module line")
	}
	out["hack/tools/go.mod"] = []byte("module " + o.module + "/hack/tools\n" + rest)
	out["hack/tools/go.sum"] = sum
	out["hack/tools/README.md"] = []byte(toolsReadme)
	return nil
}

const toolsReadme = "# hack/tools\n\n" +
	"The build tools, controller-gen and kustomize, pinned in a module of their own so\n" +
	"that none of their dependencies enters the operator's `go.mod`. Run them from the\n" +
	"root of the operator:\n\n" +
	"```sh\n" +
	"go tool -modfile=hack/tools/go.mod controller-gen object crd rbac:roleName=manager-role paths=./... \\\n" +
	"  output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac\n" +
	"go tool -modfile=hack/tools/go.mod kustomize build config/default\n" +
	"```\n\n" +
	"To change a version, run `go get -tool <module>@<version>` and then `go mod tidy`\n" +
	"inside this directory.\n"

// makefileFor is the copy's Makefile for a template whose CRD is crd: one generated
// without descriptions (a kind that embeds a whole pod template, whose CRD would be too
// large for kubectl apply's annotation) is generated so again.
func makefileFor(crd []byte) string {
	// The printer columns keep their descriptions; the schema's properties lose theirs.
	if bytes.Contains(crd, []byte("\n        description:")) {
		return makefile
	}
	return strings.Replace(makefile, "controller-gen object crd rbac", "controller-gen object crd:maxDescLen=0 rbac", 1)
}

// makefile is the copy's Makefile: the commands that docs/getting-started.md runs in a
// new operator, under the names the library's own Makefile gives them. The templates have
// none of their own, since the library's Makefile serves them.
const makefile = `# The operator's tasks; run them in this directory. make help lists them.
GO ?= go
TOOLS = $(GO) tool -modfile=hack/tools/go.mod

.PHONY: help
help: ## Show the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

.PHONY: generate
generate: ## Regenerate the deepcopy functions, the CRD, the role and the webhook configurations from the markers.
	$(TOOLS) controller-gen object crd rbac:roleName=manager-role paths=./... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(if $(wildcard config/webhook),$(TOOLS) controller-gen webhook paths=./api/... output:webhook:artifacts:config=config/webhook)

.PHONY: test
test: ## Vet and run the tests (they need the control-plane binaries: KUBEBUILDER_ASSETS).
	$(GO) vet ./...
	$(GO) test ./...

.PHONY: install
install: ## Install the CRD in the cluster that KUBECONFIG points at.
	$(TOOLS) kustomize build config/crd | kubectl apply --server-side -f -

.PHONY: run
run: ## Run the manager here, against that cluster.
	$(GO) run ./cmd
`

// goMod writes the new module's go.mod, which requires reconcilekit: a release, or a
// checkout through a replace directive; and a go.sum to start from. A template lives in a
// module of its own (the examples' examples/go.mod, the minimal template's own): a copy
// also requires what that module requires beyond the library (the OpenTelemetry SDK and
// exporter of a main, say), at the versions it was tested with, and starts from its go.sum.
func goMod(o options, out map[string][]byte) error {
	mod, err := fs.ReadFile(o.lib, "go.mod")
	if err != nil {
		return err
	}
	templateModule := "examples"
	if o.from == minimal {
		templateModule = templateDir(o.source())
	}
	templateMod, err := fs.ReadFile(o.lib, templateModule+"/go.mod")
	if err != nil {
		return err
	}
	goLine := "go 1.26.0"
	for _, line := range strings.Split(string(mod), "\n") {
		if strings.HasPrefix(line, "go ") {
			goLine = line
		}
	}
	const library = "github.com/reconcilekit/reconcilekit"
	text := "module " + o.module + "\n\n" + goLine + "\n\n"
	if isVersion(o.library) {
		text += "require " + library + " " + o.library + "\n"
	} else {
		checkout, err := filepath.Abs(o.library)
		if err != nil {
			return err
		}
		text += "require " + library + " v0.0.0-00010101000000-000000000000\n\n" +
			"replace " + library + " => " + checkout + "\n"
	}
	if reqs := requirements(string(templateMod), library); len(reqs) > 0 {
		text += "\nrequire (\n\t" + strings.Join(reqs, "\n\t") + "\n)\n"
	}
	out["go.mod"] = []byte(text)
	sum, err := fs.ReadFile(o.lib, templateModule+"/go.sum")
	if err != nil {
		return err
	}
	out["go.sum"] = sum
	return nil
}

// requirements returns the require lines of the go.mod text mod ("path version", with
// their "// indirect"), but those of the library and its nested modules.
func requirements(mod, library string) []string {
	var reqs []string
	in := false
	for _, line := range strings.Split(mod, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			in = true
			continue
		case in && line == ")":
			in = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !in:
			continue
		}
		if path, _, _ := strings.Cut(line, " "); line == "" || path == library || strings.HasPrefix(path, library+"/") || strings.HasPrefix(line, "//") {
			continue
		}
		reqs = append(reqs, line)
	}
	return reqs
}
