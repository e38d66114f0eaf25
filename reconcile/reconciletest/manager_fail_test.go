package reconciletest

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

func TestAFailedManagerStopsTheTestAtOnce(t *testing.T) {
	cp := StartAPIServer(t)
	// The manager fails as it starts: its metrics server cannot listen where it is told to.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	spec := reconcile.Manager{
		Options:     ctrl.Options{Metrics: metricsserver.Options{BindAddress: taken.Addr().String()}},
		Controllers: []reconcile.Declaration{labeler},
	}

	rec := &recordingTB{TB: t}
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		m := StartManager(rec, cp.Config, spec)
		defer m.Stop()
		// A condition that never holds: only the manager's failure ends the wait in time.
		Eventually(rec, func(context.Context) error { return errors.New("the operator has not acted") })
	}()
	<-waited

	got := rec.String()
	for _, want := range []string{"reconciletest: the manager stopped with an error", "address already in use", "the test stops"} {
		if !strings.Contains(got, want) {
			t.Errorf("the test of a failed manager said:\n%s\nwhich lacks %q", got, want)
		}
	}
	if strings.Contains(got, "the last attempt said") {
		t.Errorf("Eventually waited out its time for a manager that had failed:\n%s", got)
	}
}
