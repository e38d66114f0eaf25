// Package fasttier is go test -short in this checkout: every test that needs no control
// plane, run without the control-plane binaries (make unit-fast). A test that needs one
// skips itself under -short, saying so, and so does a test that builds a fresh module
// (SkipModuleBuild); nothing else does. Without -short a missing binary stays the failure
// that names `make controlplane`.
package fasttier

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// reason is what a test skipped for want of a control plane says.
const reason = "needs a control plane, which -short leaves out: run without -short " +
	"(make test; make controlplane builds the binaries once)"

// moduleReason is what a test skipped for the fresh module it builds says.
const moduleReason = "builds a fresh module, which -short leaves out: run without -short " +
	"(make test), where it runs with its control plane if it needs one"

// SkipModuleBuild skips t under -short: t builds a module of its own from nothing (a
// copy of a template, a scaffold, a module fetched through a proxy), which takes
// minutes on two cores whether or not it needs a control plane, and the fast tier is
// the library's tests in minutes.
func SkipModuleBuild(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip(moduleReason)
	}
}

// Skip skips t under -short: t needs a control plane.
func Skip(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip(reason)
	}
}

// SkipExamples, called in TestMain before m.Run, leaves out under -short the examples
// named, which need a control plane and, having no testing.T, cannot skip themselves:
// it adds them to -test.skip and says so on standard error.
func SkipExamples(names ...string) {
	if !flag.Parsed() {
		flag.Parse()
	}
	if !testing.Short() || len(names) == 0 {
		return
	}
	skip := "^(" + strings.Join(names, "|") + ")$"
	if given := flag.Lookup("test.skip").Value.String(); given != "" {
		skip += "|" + given
	}
	if err := flag.Set("test.skip", skip); err != nil {
		panic(err) // the testing package's own flag
	}
	fmt.Fprintf(os.Stderr, "skipping %s: %s\n", strings.Join(names, ", "), reason)
}

// SkipPackage, called first in the TestMain of a package whose every test needs a
// control plane, reports whether -short is on; if so it has left every test out, saying
// so, and TestMain runs m.Run without starting one.
func SkipPackage() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	if !testing.Short() {
		return false
	}
	if err := flag.Set("test.skip", "."); err != nil {
		panic(err) // the testing package's own flag
	}
	fmt.Fprintf(os.Stderr, "skipping every test of the package: each %s\n", reason)
	return true
}
