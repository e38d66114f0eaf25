// Newoperator starts an operator of your own: it copies a template to a new directory
// and renames, everywhere they appear, the module, the API group and the kind, so that the
// copy builds, passes its tests and regenerates to itself as it is, gofmt-clean, and names
// nothing of its template. The templates are the minimal one, hack/newoperator/minimal (a
// StatefulSet with a volume for each server, and one test of each kind), and the example
// operators of examples/. Run it from the root of a reconcilekit checkout:
//
//	go run ./hack/newoperator -from minimal -module github.com/acme/redis-operator \
//		-group cache.acme.io -kind Redis
//
// What a rename changes, and what it keeps, is in rename.go.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	var o options
	flag.StringVar(&o.from, "from", "", "the template to copy: minimal (a StatefulSet, one test of each kind), or the example keyval, memcached, podset, at or cronjob (Jobs on a cron schedule)")
	flag.StringVar(&o.module, "module", "", "the new operator's Go module path, such as github.com/acme/redis-operator")
	flag.StringVar(&o.group, "group", "", "the API group of its kind, such as cache.acme.io")
	flag.StringVar(&o.kind, "kind", "", "its kind, such as Redis")
	flag.StringVar(&o.plural, "plural", "", "the kind's resource name (default: the kind in lower case, plural by English rules)")
	flag.StringVar(&o.dir, "dir", "", "the directory to create (default: the last element of -module)")
	flag.StringVar(&o.library, "library", "", "the reconcilekit the new module requires: a version such as v0.3.0, or a checkout's directory to require through a replace directive (default: this checkout)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: go run ./hack/newoperator -from TEMPLATE -module PATH -group GROUP -kind KIND [-dir DIR]\n\n"+
			"Copies hack/newoperator/minimal (-from minimal) or examples/TEMPLATE of this reconcilekit checkout to DIR,\n"+
			"renaming its module, API group and kind.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	root, err := os.Getwd()
	if err == nil {
		o.root = root
		err = o.complete()
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
	root                      string // the reconcilekit checkout
	from, module, group, kind string
	plural, dir, library      string
}

var (
	kindPattern  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	groupPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// complete checks the options and fills in the defaults.
func (o *options) complete() error {
	if o.from == "" || o.module == "" || o.group == "" || o.kind == "" {
		return errors.New("-from, -module, -group and -kind are required (-h says more)")
	}
	if _, err := os.Stat(filepath.Join(o.source(), "PROJECT")); err != nil {
		return fmt.Errorf("-from %s: no such template here; run this from the root of a reconcilekit checkout: %w", o.from, err)
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
	if o.library == "" {
		o.library = o.root
	}
	return nil
}

// minimal is the name of the minimal template, which is no example and lives beside
// this program.
const minimal = "minimal"

// source is the directory of the template to copy.
func (o options) source() string {
	if o.from == minimal {
		return filepath.Join(o.root, "hack", "newoperator", minimal)
	}
	return filepath.Join(o.root, "examples", o.from)
}

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
	if o.from == minimal {
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

The tests need the control-plane binaries: run 'make controlplane' once in the
reconcilekit checkout, or point KUBEBUILDER_ASSETS at them. After changing the types
or the RBAC markers, regenerate with 'make generate'; 'make help' lists the other tasks
of the copy's Makefile.
`, o.dir, o.module, o.kind, o.group, from, o.plural, lower)
}
