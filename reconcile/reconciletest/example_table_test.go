package reconciletest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// Two cases of a reconciler that labels the ConfigMaps it reconciles, on an API server
// alone: one that states the write the reconcile makes, and one that expects none and
// fails. A test calls table.Run(t) on its cases instead; RunCase runs one on any
// testing.TB, here one that prints the first line of each failure.
func ExampleReconcilerTests_RunCase() {
	cp, err := reconciletest.Start(context.Background(), reconciletest.Options{}) // no nodes: an API server alone
	if err != nil {
		fmt.Println(err) // names the command that builds missing binaries
		return
	}
	defer func() { _ = cp.Stop() }()

	table := reconciletest.ReconcilerTests{
		ControlPlane: cp,
		Reconciler: func(d reconciletest.Deps) reconcile.Reconciler {
			return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				cm := &corev1.ConfigMap{}
				if err := d.Client.Get(ctx, req.NamespacedName, cm); err != nil {
					return reconcile.Result{}, err
				}
				cm.Labels = map[string]string{"seen": "yes"}
				return reconcile.Result{}, d.Client.Update(ctx, cm)
			})
		},
	}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}} // each case has a namespace of its own
	labelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{"seen": "yes"}}}

	for _, tc := range []reconciletest.ReconcilerTestCase{{
		Name:         "the write stated",
		Object:       settings,
		WantRequests: []string{"update configmaps"},
		WantObjects:  []client.Object{labelled},
	}, {
		Name:   "no write expected",
		Object: settings,
	}} {
		t := &printingTB{name: tc.Name}
		t.run(func() { table.RunCase(t, tc) })
	}
	// Output:
	// the write stated: ok
	// no write expected: FAIL: the writes (-want +got):
}

// printingTB is the testing.TB of a case run outside a test: it prints the first line of
// each failure. Its nil TB stands for the methods RunCase does not call.
type printingTB struct {
	testing.TB
	name     string
	failed   bool
	cleanups []func()
}

func (p *printingTB) Helper()                  {}
func (p *printingTB) Name() string             { return p.name }
func (p *printingTB) Context() context.Context { return context.Background() }
func (p *printingTB) Cleanup(f func())         { p.cleanups = append(p.cleanups, f) }
func (p *printingTB) Logf(string, ...any)      {}
func (p *printingTB) Error(args ...any)        { p.Errorf("%s", fmt.Sprint(args...)) }
func (p *printingTB) Fatal(args ...any)        { p.Fatalf("%s", fmt.Sprint(args...)) }

func (p *printingTB) Errorf(format string, args ...any) {
	first, _, _ := strings.Cut(fmt.Sprintf(format, args...), "\n")
	fmt.Printf("%s: FAIL: %s\n", p.name, first)
	p.failed = true
}

func (p *printingTB) Fatalf(format string, args ...any) {
	p.Errorf(format, args...)
	runtime.Goexit() // as testing does: the case's goroutine ends here
}

// run runs f in a goroutine of its own, as a test runs, then the cleanups.
func (p *printingTB) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	if !p.failed {
		fmt.Printf("%s: ok\n", p.name)
	}
}
