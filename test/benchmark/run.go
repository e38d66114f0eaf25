package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The implementations a kind is measured with, in the order the table lists them. The
// ideal pipeline is the floor an operator is measured against; the same pipeline writing
// the operator's full status (its conditions, reasons and messages) tells the cost of that
// status from the cost of the library's machinery. The bare pipeline, which creates the
// children with no custom resource at all, is the control plane's own limit and runs only
// when asked for, as does the library-built operator tracing each reconcile and write
// (reconcile.WithTracing), which tells what tracing costs, and the one with
// read-your-own-writes off (reconcile.WithExpectationTimeout(0)), which tells what that
// saves, under faults (-faults) above all.
const (
	bare      = "bare pipeline"
	ideal     = "ideal pipeline"
	fullIdeal = "ideal, full status"
	watching  = "ideal, full status, watching"
	seeded    = "seed-style"
	library   = "reconcilekit"
	traced    = "reconcilekit, traced"
	unguarded = "reconcilekit, no read-your-own-writes"
)

var implementations = []string{bare, ideal, fullIdeal, watching, seeded, fluxStyle, capiStyle, library, libraryProcess, traced, unguarded}

// isIdeal tells whether impl is one of the ideal pipelines.
func isIdeal(impl string) bool { return impl == ideal || impl == fullIdeal || impl == watching }

// implementationFlags names the implementations on the command line.
var implementationFlags = map[string]string{"bare": bare, "ideal": ideal, "full-ideal": fullIdeal, "full-ideal-watching": watching, "seed": seeded,
	"flux": fluxStyle, "capi": capiStyle, "reconcilekit": library, "reconcilekit-process": libraryProcess, "traced": traced,
	"reconcilekit-unguarded": unguarded}

// namespace holds every object of a run; it enforces no pod security level, since the
// seed-style pods would not pass the restricted one.
const namespace = "bench"

// creators is how many objects are created at once: enough that creating them is never
// what a run waits for.
const creators = 16

// A measurement is what one run of one implementation of one kind measured: seconds,
// and counts for all its objects together. Every field is a number, so that rounds
// reduce to medians field by field.
type measurement struct {
	// Converge is from the creation of the first object until every object converged;
	// the requests and reconciles are counted over the same time.
	Converge float64 `json:"convergeSeconds"`
	// Writes are to objects; Events, the events recorded, are counted apart.
	Writes float64 `json:"writes"`
	Events float64 `json:"events"`
	Reads  float64 `json:"reads"`
	// APIServerCPU and ProcessCPU are CPU seconds over the convergence: the API server's,
	// and this process's (the operator with the benchmark's creators and observer); then
	// the other components' of the control plane.
	// For an implementation run as a process of its own, ProcessCPU is this process's and
	// the operator's together, so that it covers what it covers for the others, and
	// OperatorCPU is the operator's alone (0 for the others: it cannot be told apart).
	APIServerCPU         float64 `json:"apiServerCPUSeconds"`
	ProcessCPU           float64 `json:"processCPUSeconds"`
	OperatorCPU          float64 `json:"operatorCPUSeconds,omitempty"`
	EtcdCPU              float64 `json:"etcdCPUSeconds"`
	ControllerManagerCPU float64 `json:"controllerManagerCPUSeconds"`
	SchedulerCPU         float64 `json:"schedulerCPUSeconds"`
	KwokCPU              float64 `json:"kwokCPUSeconds"`
	Reconciles           float64 `json:"reconciles"`
	// Conflicts are the answers 409 to an update or a patch; AlreadyExists, to a create.
	Conflicts     float64 `json:"conflicts"`
	AlreadyExists float64 `json:"alreadyExists,omitempty"`
	// DeferredOwn and DeferredChild are the reconciles the library-built operator put off
	// until its cache showed its own last write of the object, or of a child
	// (reconcilekit_reconciles_deferred_total): each one a reconcile that would have
	// decided from a stale copy. In-process operators only.
	DeferredOwn   float64 `json:"deferredOwn,omitempty"`
	DeferredChild float64 `json:"deferredChild,omitempty"`
	// LatencyP50 and LatencyP90 are seconds from an object's creation until it converged:
	// the median and the 90th percentile over the objects.
	LatencyP50 float64 `json:"latencyP50Seconds"`
	LatencyP90 float64 `json:"latencyP90Seconds"`
	// Resync is from the restart of the manager over the converged objects until its
	// controller went idle, having reconciled every object again.
	Resync           float64 `json:"resyncSeconds"`
	ResyncWrites     float64 `json:"resyncWrites"`
	ResyncReads      float64 `json:"resyncReads"`
	ResyncReconciles float64 `json:"resyncReconciles"`
	ResyncConflicts  float64 `json:"resyncConflicts"`
	// HeapPerObject is the live heap the restarted manager holds, less what the same
	// manager holds over no object, per object, in bytes.
	HeapPerObject float64 `json:"heapBytesPerObject"`
}

// fields lists m's fields, for the medians.
func (m *measurement) fields() []*float64 {
	return []*float64{&m.Converge, &m.Writes, &m.Events, &m.Reads, &m.APIServerCPU, &m.ProcessCPU, &m.OperatorCPU,
		&m.EtcdCPU, &m.ControllerManagerCPU, &m.SchedulerCPU, &m.KwokCPU, &m.Reconciles, &m.Conflicts, &m.AlreadyExists, &m.DeferredOwn, &m.DeferredChild,
		&m.LatencyP50, &m.LatencyP90, &m.Resync, &m.ResyncWrites, &m.ResyncReads, &m.ResyncReconciles, &m.ResyncConflicts, &m.HeapPerObject}
}

// A run measures one implementation of one kind with n objects on a control plane of its
// own, which it stops before it returns.
type run struct {
	kind  *kind
	impl  string
	n     int
	nodes int
	// progress, when not 0, is how often to print on stderr how far the convergence is.
	progress time.Duration
	// peer is the peer binary, which the implementations run as processes run.
	peer string
	// dir is a directory the run may write in (the proxy's kubeconfig).
	dir string
	// heapProfiles, when set, is the directory a process's heap profile is written to.
	heapProfiles string
	// apiProfiles, when set, is the directory the API server's CPU profile is written to.
	apiProfiles string
	// operatorProfiles, when set, is the directory a process's CPU profile over its
	// convergence is written to.
	operatorProfiles string
	// faults is the fraction of an in-process operator's writes failed before they reach
	// the API server.
	faults float64
	// operatorCPU, when set, reads the CPU time of the operator's own process.
	operatorCPU func() (time.Duration, error)
	// operatorHeap, when set, reads the live heap of the operator's own process over what
	// it held before the run, in bytes.
	operatorHeap func() (float64, error)
}

func (r run) measure(ctx context.Context, root string) (m measurement, err error) {
	cp, err := reconciletest.Start(ctx, reconciletest.Options{CRDDirectories: []string{filepath.Join(root, r.kind.crds)}, Nodes: r.nodes})
	if err != nil {
		return m, err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()

	scheme := k8sruntime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), r.kind.addToScheme(scheme)); err != nil {
		return m, err
	}
	admin, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return m, err
	}
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return m, err
	}

	if r.apiProfiles != "" {
		// A run shorter than the profile waits for it before the control plane stops, so
		// that no profile is lost (its last seconds then hold what follows convergence).
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.profileAPIServer(ctx, cp.Config)
		}()
		defer func() { <-done }()
	}
	if r.impl == bare {
		err = r.converge(ctx, cp, scheme, admin, r.kind.bare, &m)
		return m, err
	}
	if isProcess(r.impl) {
		return r.measureProcess(ctx, cp, scheme, admin)
	}

	var requests reconciletest.Counter
	var conflicts conflictCounter
	cfg := conflicts.wrap(requests.Wrap(cp.Config))
	if isIdeal(r.impl) {
		ctx, fail := context.WithCancelCause(ctx)
		defer fail(nil)
		stop, err := startIdeal(ctx, cfg, scheme, r.kind, r.impl != ideal, r.impl == watching, fail)
		if err != nil {
			return m, err
		}
		requests.Reset()
		err = r.converge(ctx, cp, scheme, admin, r.kind.object, &m)
		if err == nil && readByKstatus(r.impl) {
			err = assertCurrent(ctx, admin, r.kind)
		}
		if cause := context.Cause(ctx); err != nil && cause != nil {
			err = cause
		}
		r.count(&m, &requests, &conflicts)
		return m, errors.Join(err, stop())
	}
	op := r.kind.library
	switch r.impl {
	case seeded:
		op = r.kind.seed
	case traced:
		op = op.traced()
	case unguarded:
		op = op.with(reconcile.WithExpectationTimeout(0))
	}
	if r.faults > 0 {
		// Failed before they are counted: the writes counted are the ones sent.
		cfg = (&reconciletest.Faults{Verbs: []string{"create", "update", "patch", "delete"}, Rate: r.faults, Code: http.StatusInternalServerError}).Wrap(cfg)
	}

	// The first manager: the heap it adds over no object, then the convergence.
	before := liveHeap()
	mgr, err := startManager(ctx, cfg, scheme, r.kind, op)
	if err != nil {
		return m, err
	}
	fixed := liveHeap() - before
	requests.Reset()
	conflicts.reset()
	reconciled := metricsNow().reconciles()
	deferredOwn, deferredChild := deferred()
	if err = r.converge(ctx, cp, scheme, admin, r.kind.object, &m); err == nil && readByKstatus(r.impl) {
		err = assertCurrent(ctx, admin, r.kind)
	}
	if err != nil {
		return m, errors.Join(err, mgr.stop())
	}
	r.count(&m, &requests, &conflicts)
	m.Reconciles = metricsNow().reconciles() - reconciled
	own, child := deferred()
	m.DeferredOwn, m.DeferredChild = own-deferredOwn, child-deferredChild
	if err := mgr.stop(); err != nil {
		return m, err
	}
	if err := awaitQuiet(ctx, cp.Config, scheme, r.kind); err != nil {
		return m, err
	}

	// The second manager over the converged objects: the resync, then the heap it adds
	// over the first, per object. Each heap is the difference of two readings taken
	// moments apart, so that what earlier runs left in the process cancels out.
	requests.Reset()
	conflicts.reset()
	now := metricsNow()
	reconciled, stale := now.reconciles(), now.activity()
	start := time.Now()
	if mgr, err = startManager(ctx, cfg, scheme, r.kind, op); err != nil {
		return m, err
	}
	drained, err := awaitDrained(ctx, reconciled+float64(r.n), stale, metricsNow)
	if err != nil {
		return m, errors.Join(err, mgr.stop())
	}
	m.Resync = drained.Sub(start).Seconds()
	m.ResyncWrites, m.ResyncReads, m.ResyncConflicts = objectWrites(&requests)+events(&requests), float64(requests.Reads()), conflicts.count()
	m.ResyncReconciles = metricsNow().reconciles() - reconciled
	full := liveHeap()
	if err := mgr.stop(); err != nil {
		return m, err
	}
	m.HeapPerObject = (float64(full) - float64(liveHeap()) - float64(fixed)) / float64(r.n)
	return m, nil
}

// readByKstatus says impl writes a status kstatus reads right, which the benchmark then
// requires: every implementation but the seed-style operators, which, as the seeds, set
// no observedGeneration (kstatus reads them in progress for good), the ideal pipeline,
// whose least status has none for an At either, and the bare pipeline, which has no status.
func readByKstatus(impl string) bool { return impl != seeded && impl != ideal && impl != bare }

// events is how many event writes c counted.
func events(c *reconciletest.Counter) float64 {
	n := 0
	for _, verb := range []string{"create", "patch", "update"} {
		n += c.Count(verb, "events")
	}
	return float64(n)
}

// count records in m the requests and 409 answers counted to converge, and prints the
// requests on stderr by verb and resource: where an implementation's writes go, which the
// medians do not tell.
func (r run) count(m *measurement, requests *reconciletest.Counter, conflicts *conflictCounter) {
	m.Writes, m.Events, m.Reads = objectWrites(requests), events(requests), float64(requests.Reads())
	m.Conflicts, m.AlreadyExists = conflicts.count(), conflicts.existing()
	fmt.Fprintf(os.Stderr, "bench: %s, %s: the requests to converge %d objects, by verb and resource:\n%s", r.kind.name, r.impl, r.n, requests)
}

// objectWrites is how many writes c counted, events left out.
func objectWrites(c *reconciletest.Counter) float64 { return float64(c.Writes()) - events(c) }

// converge creates n objects with newObject and records in m how many seconds passed
// until all of them converged, and the CPU the API server and this process used meanwhile.
func (r run) converge(ctx context.Context, cp *reconciletest.ControlPlane, scheme *k8sruntime.Scheme, admin client.Client, newObject func(namespace, name string) client.Object, m *measurement) error {
	obs, err := observe(ctx, cp.Config, scheme, namespace, r.kind, r.impl == bare, readByKstatus(r.impl), r.n)
	if err != nil {
		return err
	}
	defer obs.close()

	// The API server prepares a custom resource's first write for a second or two: a
	// dry run does it before the clock starts, for the bare pipeline's kinds too.
	if err := admin.Create(ctx, newObject(namespace, "warm-up"), client.DryRunAll); err != nil {
		return err
	}
	cpuBefore, err := controlPlaneCPU(cp)
	if err != nil {
		return err
	}
	var operatorBefore time.Duration
	if r.operatorCPU != nil {
		if operatorBefore, err = r.operatorCPU(); err != nil {
			return err
		}
	}
	procCPU, start := processCPU(), time.Now()
	if r.progress > 0 {
		stop := r.report(ctx, cp, obs, start, cpuBefore["kube-apiserver"])
		defer stop()
	}
	created, err := createAll(ctx, admin, r.n, func(i int) client.Object {
		return newObject(namespace, fmt.Sprintf("%s-%05d", lowerName(r.kind), i))
	})
	if err != nil {
		return err
	}
	// Generous: a run that does not converge in this time is broken, not slow.
	done, err := obs.wait(ctx, 5*time.Minute+time.Duration(r.n)*time.Second)
	if err != nil {
		return fmt.Errorf("%s %s did not converge: %w", r.kind.name, r.impl, err)
	}
	m.ProcessCPU = (processCPU() - procCPU).Seconds()
	if r.operatorCPU != nil {
		operatorAfter, err := r.operatorCPU()
		if err != nil {
			return err
		}
		m.OperatorCPU = (operatorAfter - operatorBefore).Seconds()
		m.ProcessCPU += m.OperatorCPU
	}
	cpuAfter, err := controlPlaneCPU(cp)
	spent := func(name string) float64 { return (cpuAfter[name] - cpuBefore[name]).Seconds() }
	m.APIServerCPU, m.EtcdCPU, m.ControllerManagerCPU = spent("kube-apiserver"), spent("etcd"), spent("kube-controller-manager")
	m.SchedulerCPU, m.KwokCPU = spent("kube-scheduler"), spent("kwok")
	m.Converge = done.Sub(start).Seconds()
	m.LatencyP50, m.LatencyP90 = percentiles(obs.latencies(created))
	return err
}

// percentiles returns the median and the 90th percentile of latencies, in seconds.
func percentiles(latencies []time.Duration) (p50, p90 float64) {
	if len(latencies) == 0 {
		return 0, 0
	}
	slices.Sort(latencies)
	at := func(q float64) float64 { return latencies[int(q*float64(len(latencies)-1))].Seconds() }
	return at(0.5), at(0.9)
}

// report prints on stderr, every r.progress until stop is called, how many children are
// done, statuses say so and objects converged, with the operator's queue and the API
// server's CPU: where a slow convergence waits.
func (r run) report(ctx context.Context, cp *reconciletest.ControlPlane, obs *observer, start time.Time, apiCPU time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	last := metricsNow()
	// Stopped managers leave their queue's depth where it was; this run's queue is empty yet.
	stale := last["workqueue_depth"].value
	go func() {
		defer close(done)
		tick := time.NewTicker(r.progress)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			children, statuses, converged := obs.progress()
			cpu, _ := apiServerCPU(cp)
			now := metricsNow()
			// Means over the time since the last line.
			mean := func(name string) float64 {
				if n := now[name].observations - last[name].observations; n > 0 {
					return (now[name].observed - last[name].observed) / float64(n)
				}
				return 0
			}
			line := fmt.Sprintf("  %-9s %-13s %4.0fs  children %5d done %5d  statuses done %5d  converged %5d  API CPU %6.1fs",
				r.kind.name, r.impl, time.Since(start).Seconds(), obs.childrenSeen(), children, statuses, converged, (cpu - apiCPU).Seconds())
			// The ideal and bare pipelines have no queue.
			if r.impl == library || r.impl == traced || r.impl == seeded {
				line += fmt.Sprintf("  queue %5.0f  reconciles %5.0f of %5.3fs  queue wait %6.2fs", now["workqueue_depth"].value-stale,
					now.reconciles()-last.reconciles(), mean("controller_runtime_reconcile_time_seconds"), mean("workqueue_queue_duration_seconds"))
			}
			// What a process holds while it converges, for a run too long to wait for the
			// heap of record (measured after the resync): its caches are full once every
			// child is made.
			if r.operatorHeap != nil {
				if held, err := r.operatorHeap(); err == nil {
					line += fmt.Sprintf("  heap %5.1f KiB/obj", held/float64(r.n)/1024)
				}
			}
			fmt.Fprintln(os.Stderr, line)
			last = now
		}
	}()
	return func() { cancel(); <-done }
}

// createAll creates n objects, creators at a time, and returns when each was created, by
// name.
func createAll(ctx context.Context, c client.Client, n int, object func(i int) client.Object) (map[string]time.Time, error) {
	var mu sync.Mutex
	created := make(map[string]time.Time, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	errs := make([]error, creators)
	var wg sync.WaitGroup
	for w := range creators {
		wg.Go(func() {
			for i := range next {
				if errs[w] != nil {
					continue
				}
				obj := object(i)
				if errs[w] = c.Create(ctx, obj); errs[w] == nil {
					mu.Lock()
					created[obj.GetName()] = time.Now()
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return created, errors.Join(errs...)
}

// manager is a controller-runtime manager running in the background.
type manager struct {
	cancel context.CancelFunc
	done   chan error
}

// startManager starts a manager of op, k's operator, for cfg, made as the example mains
// make theirs (the library-built one from its declaration, which derives its cache's
// restrictions and compaction; the seed-style one with kubebuilder's default cache), and
// returns once the informers of every type it watches have synced.
func startManager(ctx context.Context, cfg *rest.Config, scheme *k8sruntime.Scheme, k *kind, op operator) (*manager, error) {
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every run starts the same controllers anew in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if op.fifo {
		opts.Controller.UsePriorityQueue = ptr.To(false)
	}
	var mgr ctrl.Manager
	var err error
	if op.declare != nil {
		mgr, err = reconcile.Manager{Options: opts, Controllers: []reconcile.Declaration{op.declare(reconcile.WithConcurrency(op.concurrency))}}.New(cfg)
	} else {
		opts.Controller.MaxConcurrentReconciles = op.concurrency
		if mgr, err = ctrl.NewManager(cfg, opts); err == nil {
			err = op.setup(mgr)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, obj := range k.watches {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &manager{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.Join(errors.New("the manager's cache did not sync"), m.stop())
	}
	return m, nil
}

// stop stops the manager and waits until it has stopped.
func (m *manager) stop() error {
	m.cancel()
	return <-m.done
}

// awaitDrained waits until the process whose metrics now reads has finished at least
// reconciled reconciles and its controllers have been idle for a while, and returns when
// they went idle. Stopped managers leave their queue gauges where they were, at stale.
func awaitDrained(ctx context.Context, reconciled, stale float64, metrics func() snapshot) (time.Time, error) {
	const idle, timeout = time.Second, 10 * time.Minute
	deadline := time.Now().Add(timeout)
	var since time.Time
	last, done, busy := -1.0, 0.0, 0.0
	said := time.Now()
	for time.Now().Before(deadline) {
		now := metrics()
		done, busy = now.reconciles(), now.activity()-stale
		if time.Since(said) >= 30*time.Second {
			// A long resync says where it is, as a long convergence does.
			fmt.Fprintf(os.Stderr, "  resync: %v of %v reconciles done, %v in progress or queued\n", done, reconciled, busy)
			said = time.Now()
		}
		switch {
		case done < reconciled || busy > 0 || done != last:
			since, last = time.Time{}, done
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= idle:
			return since, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Which of the two it missed tells a slow controller from one kept busy by events.
	return time.Time{}, fmt.Errorf("the controller did not finish %v reconciles and go idle for %v within %v: %v done, %v in progress or queued at the end",
		reconciled, idle, timeout, done, busy)
}

// A snapshot is the process's metrics at one moment, each name's series summed: one
// gathering of the registry, whose series grow with the objects (the shell keeps one per
// condition of each), serves every figure read from it.
type snapshot map[string]summed

// summed is the sum of the series of one metric: counters' and gauges' values, and
// histograms' observations and their count.
type summed struct {
	value, observed float64
	observations    uint64
}

// metricsNow gathers the process's metrics, controller-runtime's and the shell's, which
// they keep whether or not they serve them.
func metricsNow() snapshot {
	s := snapshot{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return s
	}
	for _, family := range families {
		v := s[family.GetName()]
		for _, m := range family.GetMetric() {
			v.value += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			v.observed += m.GetHistogram().GetSampleSum()
			v.observations += m.GetHistogram().GetSampleCount()
		}
		s[family.GetName()] = v
	}
	return s
}

// reconciles is how many reconciles the process has finished.
func (s snapshot) reconciles() float64 { return s["controller_runtime_reconcile_total"].value }

// activity is how many reconciles are running or queued in the process.
func (s snapshot) activity() float64 {
	return s["controller_runtime_active_workers"].value + s["workqueue_depth"].value
}

// liveHeap is the heap the process holds after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

// deferred returns the reconciles the in-process library-built operators have put off for
// their own write of an object and for a child's, since the process started.
func deferred() (own, child float64) {
	sum := func(write string) float64 {
		var total float64
		for _, k := range kinds {
			total += testutil.ToFloat64(telemetry.Deferred.WithLabelValues(k.name, write))
		}
		return total
	}
	return sum("own"), sum("child")
}

// conflictCounter counts the answers 409, which reconciletest.Counter, counting requests,
// does not see: to a create (AlreadyExists, an object created again) apart from the
// others (Conflict, a write from a stale copy).
type conflictCounter struct{ conflicts, created atomic.Int64 }

func (c *conflictCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			switch {
			case err != nil || resp.StatusCode != http.StatusConflict || isEvent(req):
				// An event recorder meets AlreadyExists on purpose: it patches the event then.
			case req.Method == http.MethodPost:
				c.created.Add(1)
			default:
				c.conflicts.Add(1)
			}
			return resp, err
		})
	})
	return cfg
}

// isEvent says req writes an event, core or events.k8s.io.
func isEvent(req *http.Request) bool {
	return strings.Contains(req.URL.Path, "/events/") || strings.HasSuffix(req.URL.Path, "/events")
}

func (c *conflictCounter) count() float64    { return float64(c.conflicts.Load()) }
func (c *conflictCounter) existing() float64 { return float64(c.created.Load()) }
func (c *conflictCounter) reset()            { c.conflicts.Store(0); c.created.Store(0) }

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// apiProfileDelay and apiProfileLength place the API server's CPU profile in a run: from
// the first creates, over most of a Keyval's convergence at N=1000 on the 2-core machine
// (63 to 95 s), so that two runs' profiles hold most of their work, not a window of it.
const (
	apiProfileDelay  = 5 * time.Second
	apiProfileLength = 55 * time.Second
)

// profileAPIServer writes a CPU profile of the API server, taken apiProfileDelay into the
// run for apiProfileLength, to r.apiProfiles as <kind>-<implementation>.apiserver.pprof.
// A run too short for it, or a failure, is reported on stderr and fails nothing.
func (r run) profileAPIServer(ctx context.Context, cfg *rest.Config) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(apiProfileDelay):
	}
	err := func() error {
		cfg := rest.CopyConfig(cfg)
		cfg.Timeout = apiProfileLength + time.Minute // the API server answers when the profile ends
		c, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return err
		}
		b, err := c.RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(int(apiProfileLength.Seconds()))).DoRaw(ctx)
		if err != nil {
			return err
		}
		name := strings.ToLower(r.kind.name) + "-" + flagOf(r.impl) + ".apiserver.pprof"
		return os.WriteFile(filepath.Join(r.apiProfiles, name), b, 0o644)
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: profiling the API server in the run of %s %s: %v\n", r.kind.name, r.impl, err)
	}
}

// flagOf is the name of impl on the command line.
func flagOf(impl string) string {
	for flag, i := range implementationFlags {
		if i == impl {
			return flag
		}
	}
	return impl
}
