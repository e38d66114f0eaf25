// Newoperator starts an operator of your own: it copies a template to a new directory
// and renames, everywhere they appear, the module, the API group and the kind, so that the
// copy builds, passes its tests and regenerates to itself as it is, gofmt-clean, and names
// nothing of its template. The templates are the minimal one, cmd/newoperator/minimal (a
// StatefulSet with a volume for each server, and one test of each kind), and the example
// operators of examples/. They travel inside the program, so it needs no checkout:
//
//	go run github.com/reconcilekit/reconcilekit/cmd/newoperator@v0.1.0 -from minimal \
//		-module github.com/acme/redis-operator -group cache.acme.io -kind Redis
//
// makes an operator that requires reconcilekit v0.1.0, the version the program was run at.
// With -scope Cluster the minimal template's kind is cluster-scoped, and each object makes a
// namespace of its own for its StatefulSet (cmd/newoperator/minimal-cluster).
// Run inside a checkout of reconcilekit (go run ./cmd/newoperator ...), it copies the
// checkout's templates and requires the checkout through a replace directive.
//
// What a rename changes, and what it keeps, is in rename.go.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
)

// libraryModule is the module path of reconcilekit.
const libraryModule = "github.com/reconcilekit/reconcilekit"

func main() {
	var o options
	flag.StringVar(&o.from, "from", "", "the template to copy: minimal (a StatefulSet, one test of each kind), or an example: "+exampleList())
	flag.StringVar(&o.module, "module", "", "the new operator's Go module path, such as github.com/acme/redis-operator")
	flag.StringVar(&o.group, "group", "", "the API group of its kind, such as cache.acme.io")
	flag.StringVar(&o.kind, "kind", "", "its kind, such as Redis")
	flag.StringVar(&o.plural, "plural", "", "the kind's resource name (default: the kind in lower case, plural by English rules)")
	flag.StringVar(&o.dir, "dir", "", "the directory to create (default: the last element of -module)")
	flag.StringVar(&o.scope, "scope", namespaced, "the scope of the kind: Namespaced, or Cluster, whose objects each make a namespace of their own for what they own (with -from minimal only)")
	flag.StringVar(&o.library, "library", "", "the reconcilekit the new module requires: a version such as v0.1.0, or a checkout's directory to require through a replace directive (default: the checkout this runs in, else the version this program was built at)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: go run %s/cmd/newoperator@VERSION -from TEMPLATE -module PATH -group GROUP -kind KIND [-scope Cluster] [-dir DIR]\n\n"+
			"Copies the template minimal or the example TEMPLATE of reconcilekit to DIR, renaming its module,\n"+
			"API group and kind. In a reconcilekit checkout (go run ./cmd/newoperator ...) the templates\n"+
			"are the checkout's and the copy requires the checkout; elsewhere they are those of VERSION.\n"+
			"-from minimal -scope Cluster makes the kind cluster-scoped: each object makes a namespace\n"+
			"named after it and puts its StatefulSet there.\n\n", libraryModule)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	wd, err := os.Getwd()
	if err == nil {
		err = o.complete(checkoutAbove(wd), buildVersion())
	}
	if err == nil {
		err = create(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "newoperator:", err)
		os.Exit(1)
	}
	fmt.Print(o.nextSteps())
}

// options are what the flags say, completed with their defaults.
type options struct {
	lib                       fs.FS // the library's files: a checkout, or the embedded templates
	from, module, group, kind string
	plural, dir, library      string
	scope                     string // Namespaced or Cluster
}

// The scopes of a kind, as -scope and the +kubebuilder:resource marker spell them.
const (
	namespaced = "Namespaced"
	cluster    = "Cluster"
)

// source is the template whose files the copy is made of: the one -from names, or the
// cluster-scoped variant of the minimal one.
func (o options) source() string {
	if o.scope == cluster {
		return minimalCluster
	}
	return o.from
}

// checkoutAbove returns the root of the reconcilekit checkout that holds dir, or "" if
// none does: the nearest directory at or above dir whose go.mod is the library's.
func checkoutAbove(dir string) string {
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			first, _, _ := strings.Cut(string(mod), "\n")
			if strings.TrimSpace(first) == "module "+libraryModule {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// buildVersion is the version of reconcilekit this program was built at, as go run and
// go install of module@version record it: v0.1.0, or a pseudo-version; "(devel)" or ""
// when it was built in a checkout, which knows no version of its own.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return info.Main.Version
}

// isVersion reports whether v is a module version the go command can fetch: a
// semantic version, not "(devel)", nor a local build's version of a modified tree
// (v0.1.1-0.20260101000000-abcdef123456+dirty).
func isVersion(v string) bool {
	return strings.HasPrefix(v, "v") && len(v) > 1 && v[1] >= '0' && v[1] <= '9' && !strings.ContainsAny(v, "+/\\")
}

var (
	kindPattern  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	groupPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// complete checks the options and fills in the defaults: the library and its templates
// are the checkout's, in a checkout, else the embedded ones at built, the version this
// program was built at.
func (o *options) complete(checkout, built string) error {
	if o.from == "" || o.module == "" || o.group == "" || o.kind == "" {
		return errors.New("-from, -module, -group and -kind are required (-h says more)")
	}
	if checkout != "" {
		o.lib = os.DirFS(checkout)
	} else {
		lib, err := embedded()
		if err != nil {
			return fmt.Errorf("the templates inside this program: %w", err)
		}
		o.lib = lib
	}
	names := templateNames(o.lib)
	found := false
	for _, name := range names {
		found = found || name == o.from
	}
	if !found {
		return fmt.Errorf("-from %s: no such template; want one of %s", o.from, strings.Join(names, ", "))
	}
	switch o.scope {
	case "", namespaced:
		o.scope = namespaced
	case cluster:
		// The examples' logic puts what an object owns in the object's namespace, which a
		// cluster-scoped object has not: only the minimal template has a cluster-scoped
		// variant, whose objects make a namespace of their own.
		if o.from != minimal {
			return fmt.Errorf("-scope Cluster: the template %s is namespaced only; use -from minimal -scope Cluster, "+
				"whose objects each make a namespace for what they own, and grow it from there", o.from)
		}
	default:
		return fmt.Errorf("-scope %q: want Namespaced or Cluster", o.scope)
	}
	if !kindPattern.MatchString(o.kind) {
		return fmt.Errorf("-kind %q: want a Go type name that starts with a capital letter, such as Redis", o.kind)
	}
	if !groupPattern.MatchString(o.group) {
		return fmt.Errorf("-group %q: want a lower-case DNS name of two labels or more, such as cache.acme.io", o.group)
	}
	if strings.ContainsAny(o.module, " \t\\") || strings.HasPrefix(o.module, "/") {
		return fmt.Errorf("-module %q: want a module path, such as github.com/acme/redis-operator", o.module)
	}
	if o.plural == "" {
		o.plural = plural(strings.ToLower(o.kind))
	}
	if !namePattern.MatchString(o.plural) {
		return fmt.Errorf("-plural %q: want lower-case letters and digits", o.plural)
	}
	if o.dir == "" {
		o.dir = path.Base(o.module)
	}
	switch {
	case o.library != "":
	case checkout != "":
		o.library = checkout
	case isVersion(built):
		o.library = built
	default:
		return fmt.Errorf("which reconcilekit should the new module require? This program runs outside a checkout, "+
			"and was built at no version (%q), as a build of a checkout is: pass -library with a version, such as -library v0.1.0, "+
			"or with the directory of a checkout, or run it as go run %s/cmd/newoperator@VERSION", built, libraryModule)
	}
	return nil
}

// minimal is the name of the minimal template, which is no example and lives beside
// this program.
const minimal = "minimal"

// minimalCluster is the directory, beside minimal, of its cluster-scoped variant, which
// -from minimal -scope Cluster copies. A variant of its own rather than a rewrite of the
// minimal one: its logic and tests differ (the namespace each object makes, the objects
// named after the tests' namespaces), and as a module of the checkout it is built,
// generated and tested as it is copied.
const minimalCluster = "minimal-cluster"

// plural is the resource name of a kind whose lower-case form is lower, by the common
// English rules: -es after s, x, z, ch and sh; -ies for a y after a consonant; -s
// otherwise. controller-gen's own guess (flect.Pluralize) knows many irregular words
// and keeps some words that end in s as they are (Redis stays redis), so the copy pins
// the plural with path= in its +kubebuilder:resource marker rather than leave it to the
// guess: what this prints is what the CRD and the RBAC markers say.
func plural(lower string) string {
	switch {
	case strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "z"),
		strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return lower + "es"
	case len(lower) > 1 && strings.HasSuffix(lower, "y") && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return lower[:len(lower)-1] + "ies"
	}
	return lower + "s"
}

// nextSteps is what the program prints once the copy exists.
func (o options) nextSteps() string {
	lower := strings.ToLower(o.kind)
	from := "examples/" + o.from
	switch {
	case o.from == minimal && o.scope == cluster:
		from = "the minimal template, cluster-scoped: each " + o.kind + " makes a namespace of its own"
	case o.from == minimal:
		from = "the minimal template"
	}
	return fmt.Sprintf(`Created %[1]s: module %[2]s, kind %[3]s of group %[4]s, from %[5]s.

The resource is %[6]s (singular %[7]s): path=%[6]s in the +kubebuilder:resource
marker of api/<version>/%[7]s_types.go says so to controller-gen, and the RBAC markers
in controller/rbac.go grant resources=%[6]s. Change both together, if at all.

Kept from the template: what the operator runs (the image and the command in
controller/%[7]s.go). Not kept: its short name and category; add shortName= and
categories= of your own to the +kubebuilder:resource marker if you want them.

Next:
  cd %[1]s
  go mod tidy
  go vet ./... && go test ./...

The tests need the control-plane binaries: run 'make controlplane' once in a
reconcilekit checkout, or point KUBEBUILDER_ASSETS at them. After changing the types
or the RBAC markers, regenerate with 'make generate'; 'make help' lists the other tasks
of the copy's Makefile.
`, o.dir, o.module, o.kind, o.group, from, o.plural, lower)
}

// exampleList names the examples this program holds, for its usage: the examples of the
// checkout it was built from, each a directory of examples/ with a PROJECT file.
func exampleList() string {
	lib, err := embedded()
	if err != nil {
		return "those of examples/ in reconcilekit"
	}
	names := slices.DeleteFunc(templateNames(lib), func(name string) bool { return name == minimal })
	return strings.Join(names, ", ")
}
