package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"
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
	stopOnce sync.Once
}

// StartManager runs a controller-runtime manager built from cfg and opts and set up by
// setup, typically the operator's own function that registers its controllers, until
// Stop or the end of the test. Run it with a config from ConfigFor to prove the
// operator's RBAC, wrapped by a Counter to measure its requests.
//
// Unless opts say otherwise, the manager serves no metrics and controller names may
// repeat, so that tests can run managers side by side and one after another. A manager
// that fails fails the test.
func StartManager(t testing.TB, cfg *rest.Config, opts manager.Options, setup ...func(manager.Manager) error) *Manager {
	t.Helper()
	if opts.Metrics.BindAddress == "" {
		opts.Metrics.BindAddress = "0"
	}
	if opts.Controller.SkipNameValidation == nil {
		opts.Controller.SkipNameValidation = ptr.To(true)
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		t.Fatalf("reconciletest: creating a manager: %v", err)
	}
	for _, s := range setup {
		if err := s(mgr); err != nil {
			t.Fatalf("reconciletest: setting up a manager: %v", err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{Manager: mgr, t: t, started: reconciles(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		m.err = mgr.Start(ctx)
	}()
	t.Cleanup(m.Stop)
	return m
}

// Stop stops the manager and waits until it has stopped, failing the test if the
// manager failed. It may be called more than once.
func (m *Manager) Stop() {
	m.t.Helper()
	m.stopOnce.Do(func() {
		m.cancel()
		<-m.done
		if m.err != nil && !errors.Is(m.err, context.Canceled) {
			m.t.Errorf("reconciletest: the manager failed: %v", m.err)
		}
	})
}

// AwaitReconciles waits until the named controller has finished n reconciles, whatever
// their result, since the manager started. Reconciles are counted by controller name
// across the test binary: managers that run side by side share the count.
func (m *Manager) AwaitReconciles(controller string, n int) {
	m.t.Helper()
	Eventually(m.t, func(context.Context) error {
		select {
		case <-m.done:
			return fmt.Errorf("the manager has stopped (%v)", m.err)
		default:
		}
		if got := reconciles()[controller] - m.started[controller]; got < float64(n) {
			return fmt.Errorf("controller %s has finished %v of %d reconciles", controller, got, n)
		}
		return nil
	})
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
