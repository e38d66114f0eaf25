// The demo runs the five example operators, Memcached, PodSet, At, Keyval and CronJob, on a
// local control plane and shows them converge: the whole project in one command.
//
// It starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, whose
// simulated nodes run every pod, installs the examples' CRDs, runs the five operators in
// this one process, applies their samples (the At scheduled five seconds ahead) and prints
// a status table until Memcached is Available, PodSet lists its ready pods and At is
// DONE (and the Keyval Ready, the CronJob's first Job, on the next minute, succeeded). It exits 0 then, and 1 if they have not converged within --timeout. Every
// process it started is stopped on the way out, whatever the way.
//
// From the repository root:
//
//	make demo                        # builds the control plane once, then runs
//	make demo ARGS=--keep-running    # stays up after converging, until Ctrl-C
//	cd examples && go run ./demo --timeout=5m --verbose
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// module is what go.mod says at the root of the repository.
const module = "module github.com/reconcilekit/reconcilekit\n"

func main() {
	keepRunning := flag.Bool("keep-running", false,
		"Keep the operators and the control plane running after they converge, until interrupted.")
	timeout := flag.Duration("timeout", 3*time.Minute,
		"How long the operators have to converge, counted from the start, before the demo gives up.")
	verbose := flag.Bool("verbose", false, "Write the operators' logs to standard error.")
	flag.Parse()

	// The table is the demo's output; the logs are there to debug it.
	logger := logr.Discard()
	if *verbose {
		logger = zap.New(zap.WriteTo(os.Stderr))
	}
	ctrl.SetLogger(logger)

	root, err := repositoryRoot()
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, options{root: root, timeout: *timeout, keepRunning: *keepRunning, out: os.Stdout, redraw: isTerminal(os.Stdout)})
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// repositoryRoot finds the root of the repository, where the examples are, in the
// working directory or above it.
func repositoryRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if goMod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(goMod, []byte(module)) {
			return dir, nil
		}
		if dir == filepath.Dir(dir) {
			return "", errors.New("run the demo from the reconcilekit repository, where `make demo` does: " +
				"neither " + wd + " nor a directory above it holds its go.mod")
		}
	}
}

// isTerminal says whether f is a terminal, where the table can be redrawn in place.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
