// Bench measures the example operators built from reconcilekit against seed-style
// implementations of the same operators and against the ideal pipeline of each kind: a
// program driven by watches alone that does the least API work an operator reporting in
// its status can (create the children and write "in progress", then, once the child is
// done, write "ready"), with no queue, cache reads only and no retry. It is the floor.
//
// For each kind (Memcached, PodSet, At, Keyval) and each implementation it starts a fresh local
// cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok nodes,
// all unthrottled), creates N objects and times their real convergence: every Deployment
// available, or every At's pod finished, and every status saying so, as watches report it.
// It counts the implementation's requests, its reconciles and the CPU the API server
// spent, then restarts the operator over the converged objects and counts again while it
// resyncs, and weighs the heap per object. The bare pipeline, which creates the children
// with no custom resource at all (the control plane's own limit), runs when asked for.
// Rounds rotate the order of the implementations; the table holds medians.
//
// The last line printed is a machine-readable summary. The medians are also recorded, by
// N, in results.json next to this file, and docs/performance.svg is drawn from them.
//
//	cd test && go run ./benchmark -n 200 -rounds 3
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
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

func main() {
	n := flag.Int("n", 200, "objects per kind and implementation, at least 1")
	rounds := flag.Int("rounds", 0, "rounds; the table shows the median of each figure (0: 3 up to N=1000, 1 above, where a run takes many minutes)")
	only := flag.String("kinds", "memcached,podset,at,keyval", "the kinds to measure, separated by commas")
	impls := flag.String("implementations", "ideal,full-ideal,seed,flux,capi,reconcilekit,reconcilekit-process",
		"the implementations to measure, separated by commas: ideal, full-ideal, full-ideal-watching (the full-status ideal also watching every kind of child, as reconcilekit does to keep them, and doing nothing with their events), seed, flux (Flux-style), capi (Cluster-API-style), reconcilekit, "+
			"reconcilekit-process (the same operator run as its own process, as the peers run), bare, traced (reconcilekit tracing each reconcile and write), "+
			"reconcilekit-unguarded (reconcilekit with read-your-own-writes off)")
	record := flag.Bool("record", true, "record the medians in test/benchmark/results.json and redraw docs/performance.svg (never with -workers, -faults, -progressinterval or -fifo)")
	workers := flag.Int("workers", 0, "reconciles at a time for the library-built operators; 0 keeps what the examples ship with")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (the operators under test among it) to this file")
	progress := flag.Duration("progress", 0, "print on stderr, this often, how far each run's convergence is: children done, statuses saying so, the operator's queue, the API server's CPU, and for an implementation run as a process its live heap an object, after two full collections (0: never)")
	redraw := flag.Bool("redraw", false, "only redraw docs/performance.svg from test/benchmark/results.json")
	progressInterval := flag.Duration("progressinterval", 0, "an experiment: the in-process library-built operators write progress alone at most this often (reconcile.WithProgressInterval; 0 keeps the examples' 30s, a long one writes none); not recorded")
	fifo := flag.Bool("fifo", false, "an experiment: the in-process library-built operators serve their queue first in, first out, not by controller-runtime's priority queue; not recorded")
	faults := flag.Float64("faults", 0, "the fraction of the in-process operators' writes (create, update, patch, delete) failed with 500 before they reach the API server, from 0 to 1; not recorded")
	heapProfiles := flag.String("heapprofiles", "", "write the heap profile of each implementation run as a process (flux, capi, reconcilekit-process), taken when it holds the converged objects, to this directory as <kind>-<flux|capi|reconcilekit>.pb.gz (the last round's; sampled finely, which slows those runs a little)")
	apiProfiles := flag.String("apiserverprofiles", "", "write a CPU profile of the API server in each run, 5 s into it for 55 s (most of a Keyval run at N=1000; a shorter run waits for it), to this directory as <kind>-<implementation>.apiserver.pprof (the last round's)")
	operatorProfiles := flag.String("operatorprofiles", "", "write a CPU profile of each implementation run as a process (flux, capi, reconcilekit-process) over its convergence, from its start until it is stopped, to this directory as <kind>-<flux|capi|reconcilekit>.cpu.pprof (the last round's)")
	flag.Parse()
	// The operators under test log nothing, so that neither implementation pays for its
	// log; the control plane's helpers log through the same logger.
	ctrl.SetLogger(logr.Discard())

	if *redraw {
		if err := redrawChart(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := options{
		n: *n, rounds: *rounds, kinds: *only, implementations: *impls,
		record: *record, progress: *progress, heapProfiles: *heapProfiles, apiProfiles: *apiProfiles, operatorProfiles: *operatorProfiles,
		experiment: experiment{workers: *workers, faults: *faults, progressInterval: *progressInterval, fifo: *fifo},
	}
	if err := bench(ctx, o); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the benchmark's flags.
type options struct {
	n, rounds                                   int
	kinds, implementations                      string // as the flags list them
	record                                      bool
	progress                                    time.Duration
	heapProfiles, apiProfiles, operatorProfiles string // directories, or none
	experiment
}

// An experiment runs the library-built operators otherwise than the examples ship them;
// its figures are never recorded.
type experiment struct {
	workers          int           // reconciles at a time, or 0
	faults           float64       // the fraction of writes failed
	progressInterval time.Duration // reconcile.WithProgressInterval, or 0
	fifo             bool          // a first-in, first-out queue, not the priority queue
}

func (x experiment) check() error {
	if x.workers < 0 {
		return fmt.Errorf("-workers is %d; want 0 or more", x.workers)
	}
	if x.faults < 0 || x.faults > 1 {
		return fmt.Errorf("-faults is %v; want a fraction from 0 to 1", x.faults)
	}
	return nil
}

// any tells whether the operators run otherwise than they ship.
func (x experiment) any() bool { return x != experiment{} }

// String lists the experiment's flags, as given.
func (x experiment) String() string {
	var flags []string
	if x.workers > 0 {
		flags = append(flags, fmt.Sprintf("-workers=%d", x.workers))
	}
	if x.faults > 0 {
		flags = append(flags, fmt.Sprintf("-faults=%v", x.faults))
	}
	if x.progressInterval > 0 {
		flags = append(flags, "-progressinterval="+x.progressInterval.String())
	}
	if x.fifo {
		flags = append(flags, "-fifo")
	}
	return strings.Join(flags, " ")
}

// apply runs k's library-built operator as the experiment says.
func (x experiment) apply(k *kind) {
	if x.workers > 0 {
		k.library.concurrency = x.workers
	}
	if x.progressInterval > 0 {
		k.library = k.library.with(reconcile.WithProgressInterval(x.progressInterval))
	}
	k.library.fifo = x.fifo
}

func bench(ctx context.Context, o options) error {
	n, rounds := o.n, o.rounds
	if n < 1 {
		return fmt.Errorf("-n is %d; want at least 1", n)
	}
	if rounds == 0 {
		rounds = 3
		if n > 1000 {
			rounds = 1
		}
	}
	if rounds < 1 {
		return fmt.Errorf("-rounds is %d; want 1 or more, or 0 for the default", rounds)
	}
	if err := o.check(); err != nil {
		return err
	}
	var selected []*kind
	for name := range strings.SplitSeq(o.kinds, ",") {
		k := kindNamed(strings.TrimSpace(name))
		if k == nil {
			return fmt.Errorf("unknown kind %q in -kinds", name)
		}
		o.apply(k)
		selected = append(selected, k)
	}
	var measuredImpls []string
	for name := range strings.SplitSeq(o.implementations, ",") {
		impl, ok := implementationFlags[strings.TrimSpace(name)]
		if !ok {
			return fmt.Errorf("unknown implementation %q in -implementations; want ideal, full-ideal, full-ideal-watching, seed, flux, capi, reconcilekit, reconcilekit-process, bare, traced or reconcilekit-unguarded", name)
		}
		measuredImpls = append(measuredImpls, impl)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	// The implementations run as processes are built once, from the nested module.
	dir, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var peer string
	if slices.ContainsFunc(measuredImpls, isProcess) {
		if peer, err = buildPeer(ctx, root, dir); err != nil {
			return err
		}
	}

	// Each node of the simulated cluster takes up to 1000 pods.
	nodes := n/1000 + 1
	measured := map[*kind]map[string][]measurement{}
	for round := range rounds {
		for _, k := range selected {
			if measured[k] == nil {
				measured[k] = map[string][]measurement{}
			}
			// Rotated every round, so that no implementation always runs first.
			for i := range measuredImpls {
				impl := measuredImpls[(i+round)%len(measuredImpls)]
				if !k.has(impl) {
					continue
				}
				// What earlier runs left in this process, which would slow a later in-process run.
				goroutines, heap := runtime.NumGoroutine(), liveHeap()
				started := time.Now()
				m, err := run{kind: k, impl: impl, n: n, nodes: nodes, progress: o.progress, peer: peer, dir: dir, heapProfiles: o.heapProfiles, apiProfiles: o.apiProfiles, operatorProfiles: o.operatorProfiles, faults: o.faults}.measure(ctx, root)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", round+1, k.name, impl, err)
				}
				measured[k][impl] = append(measured[k][impl], m)
				fmt.Fprintf(os.Stderr, "round %d/%d  %-9s %-13s converged in %6.2fs, an object in %.2fs (median) %.2fs (p90)  (run took %s; before it this process had %d goroutines, %.0f MiB of heap)\n",
					round+1, rounds, k.name, impl, m.Converge, m.LatencyP50, m.LatencyP90, time.Since(started).Round(time.Second), goroutines, float64(heap)/(1<<20))
			}
		}
	}

	report := newReport(n, rounds, nodes, o.experiment, selected, measured)
	// The figures of record are of the operators as they ship, without faults.
	if o.record && !o.any() {
		results := filepath.Join(root, "test", "benchmark", "results.json")
		chart := filepath.Join(root, "docs", "performance.svg")
		if err := report.record(results, chart); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "recorded the medians in %s and drew %s\n", results, chart)
	}
	report.print(os.Stdout)
	return nil
}

// redrawChart draws docs/performance.svg from the results recorded.
func redrawChart() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	results, err := readResults(filepath.Join(root, "test", "benchmark", "results.json"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "docs", "performance.svg"), chart(results), 0o644)
}

// moduleRoot finds the root of the repository from the working directory, where the
// CRDs are: the directory of the library's go.mod, above the test module's own.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if goMod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(goMod, []byte("module github.com/reconcilekit/reconcilekit\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the benchmark inside the reconcilekit repository: no go.mod of the library found above the working directory")
		}
		dir = parent
	}
}

// lowerName is the kind's name as objects are named after it.
func lowerName(k *kind) string { return strings.ToLower(k.name) }
