package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Manager is an operator's manager running in the background of a test.
type Manager struct {
	manager.Manager

	t        testing.TB
	started  map[string]float64 // reconciles finished before it started, by controller
	cancel   context.CancelFunc
	done     chan struct{}
	err      error // what Start returned, once done is closed
	failed   bool  // Start returned an error before Stop, reported at once; read once done is closed
	stopOnce sync.Once
	refused  func() string // the report of a request the API server refused, if any (Env.Run)
	log      *logState     // the manager's log: quiet once the test has reported its failure
}

// StartManager runs the manager spec makes from its controller declarations, from cfg,
// until Stop or the end of the test. Run it with a config from ConfigFor to prove the
// operator's RBAC, wrapped by a Counter to measure its requests.
//
// Unless spec's options say otherwise, the manager serves no metrics, no health probes,
// and controller names may repeat, so that tests can run managers side by side and one
// after another. A manager that fails fails the test.
//
// The first failure is the first thing the test prints: a child written of a kind the
// declaration does not own fails the test at once with the refusal, printed to standard
// error as it happens, and the manager logs nothing more; a refused request is left to
// Env's report; the manager's other errors are logged without stack traces. The manager
// logs through spec's Options.Logger, or controller-runtime's global logger.
//
// A manager that stops with an error before Stop fails the test as it stops, naming the
// error, and the test's next Eventually or AwaitReconciles stops it at once rather than
// waiting in vain for an operator that no longer runs.
func StartManager(t testing.TB, cfg *rest.Config, spec reconcile.Manager) *Manager {
	t.Helper()
	opts := &spec.Options
	log := &logState{fail: func(message string) { report(t, message) }}
	base := opts.Logger
	if base.GetSink() == nil {
		base = ctrllog.Log
	}
	opts.Logger = quietLogger(base, log)
	if opts.Metrics.BindAddress == "" {
		opts.Metrics.BindAddress = "0"
	}
	if opts.Controller.SkipNameValidation == nil {
		opts.Controller.SkipNameValidation = ptr.To(true)
	}
	mgr, err := spec.New(cfg)
	if err != nil {
		t.Fatalf("reconciletest: creating a manager: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{Manager: mgr, t: t, started: reconciles(), cancel: cancel, done: make(chan struct{}), log: log}
	stopping := stopOn(t)
	go func() {
		defer close(m.done)
		m.err = mgr.Start(ctx)
		if m.err != nil && ctx.Err() == nil { // not stopped: failed
			m.failed = true
			message := fmt.Sprintf("reconciletest: the manager stopped with an error: %v", m.err)
			stopping(message)
			m.log.failed(message)
		}
	}()
	t.Cleanup(m.Stop)
	return m
}

// stopped holds, for each test whose manager failed, the failure that stops it: what
// Eventually reads to end at once.
var stopped sync.Map // testing.TB → string

// stopOn returns what stops t for a failure: its next Eventually fails at once, naming it.
// It forgets t when t ends.
func stopOn(t testing.TB) func(message string) {
	t.Cleanup(func() { stopped.Delete(t) })
	return func(message string) { stopped.LoadOrStore(t, message) }
}

// stoppedFor returns the failure that stops t, if any.
func stoppedFor(t testing.TB) (string, bool) {
	v, ok := stopped.Load(t)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// Stop stops the manager and waits until it has stopped, failing the test if the
// manager failed or did not stop within a minute. It may be called more than once.
func (m *Manager) Stop() {
	m.t.Helper()
	m.stopOnce.Do(func() {
		m.cancel()
		defer m.log.quiet.Store(true) // nothing is logged, nor reported, once the test ends
		select {
		case <-m.done:
		case <-time.After(managerStopTimeout):
			// controller-runtime 0.25 never returns from Start once cancelled while a cache
			// it waits for cannot sync (controller-runtime#3440).
			m.t.Errorf("reconciletest: the manager did not stop within %v: was an informer started before the manager (an index, GetInformer) for a kind the operator may not list?", managerStopTimeout)
			return
		}
		if m.err != nil && !m.failed && !errors.Is(m.err, context.Canceled) {
			m.t.Errorf("reconciletest: the manager failed: %v", m.err)
		}
	})
}

// managerStopTimeout bounds Stop: a manager stops in seconds, even one still starting.
const managerStopTimeout = time.Minute

// AwaitReconciles waits until the named controller has finished n reconciles, whatever
// their result, since the manager started. Reconciles are counted by controller name
// across the test binary: managers that run side by side share the count.
//
// It fails the test as soon as the wait is known to be vain rather than when it times
// out: when the manager stops, when the API server refused the operator a request (Env.Run
// watches for that), or when a few seconds after the manager started its controllers
// none is named controller, and then it names those that are.
func (m *Manager) AwaitReconciles(controller string, n int) {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(m.t.Context(), awaitTimeout)
	defer cancel()
	var unnamedSince time.Time // when the manager had started controllers and none was named controller
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		totals := reconciles()
		got, named := totals[controller]
		switch {
		case named && got-m.started[controller] >= float64(n):
			return
		case m.refused != nil && m.refused() != "":
			m.t.Fatalf("reconciletest: awaiting %d reconciles of controller %s: the operator was refused a request (reported above)", n, controller)
		case m.stopped():
			m.t.Fatalf("reconciletest: awaiting %d reconciles of controller %s: the manager has stopped (%v)", n, controller, m.err)
		case named:
			unnamedSince = time.Time{}
		case m.elected() && unnamedSince.IsZero():
			unnamedSince = time.Now()
		case m.elected() && time.Since(unnamedSince) > controllerStartGrace:
			// A controller registers its metrics first thing when it starts, which the
			// manager does as soon as it is elected (at once, without leader election).
			m.t.Fatalf("reconciletest: no controller is named %q; the controllers running in this test binary are %s "+
				"(a controller is named by the builder's Named, or else by the lower-case kind of For)",
				controller, strings.Join(slices.Sorted(maps.Keys(totals)), ", "))
		}
		select {
		case <-ctx.Done():
			m.t.Fatalf("reconciletest: controller %s has finished %v of %d reconciles after %s", controller, got-m.started[controller], n, awaitTimeout)
		case <-tick.C:
		}
	}
}

// awaitTimeout bounds AwaitReconciles, as Eventually is bounded.
const awaitTimeout = 2 * time.Minute

// controllerStartGrace is how long after a manager is elected its controllers may take to
// start. A controller registers its metrics as it starts, before it waits for anything.
const controllerStartGrace = 5 * time.Second

func (m *Manager) stopped() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *Manager) elected() bool {
	select {
	case <-m.Elected():
		return true
	default:
		return false
	}
}

// reconciles returns how many reconciles each controller of the process has finished,
// as controller-runtime counts them for its metrics.
func reconciles() map[string]float64 {
	totals := make(map[string]float64)
	families, _ := metrics.Registry.Gather() // a partial answer is still the best there is
	for _, family := range families {
		if family.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, metric := range family.GetMetric() {
			for _, label := range metric.GetLabel() {
				if label.GetName() == "controller" {
					totals[label.GetValue()] += metric.GetCounter().GetValue()
				}
			}
		}
	}
	return totals
}
