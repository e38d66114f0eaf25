package main

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestParseMetricsSumsTheSeriesOfEachMetric(t *testing.T) {
	text := []byte(`# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="a",result="success"} 7
controller_runtime_reconcile_total{controller="a",result="error"} 2
# TYPE workqueue_depth gauge
workqueue_depth{name="a"} 3
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{controller="a",le="+Inf"} 4
controller_runtime_reconcile_time_seconds_sum{controller="a"} 0.5
controller_runtime_reconcile_time_seconds_count{controller="a"} 4
`)
	s := parseMetrics(text)
	if got := s.reconciles(); got != 9 {
		t.Errorf("reconciles = %v, want 9", got)
	}
	if got := s.activity(); got != 3 {
		t.Errorf("activity = %v, want 3 (the depth, no active workers reported)", got)
	}
	if h := s["controller_runtime_reconcile_time_seconds"]; h.observations != 4 || h.observed != 0.5 {
		t.Errorf("histogram = %+v, want 4 observations of 0.5 s in all", h)
	}
}

func TestParseMetricsOfGarbageIsEmpty(t *testing.T) {
	if s := parseMetrics([]byte("this is { not metrics")); len(s) != 0 {
		t.Errorf("parseMetrics = %v, want nothing", s)
	}
}

// A client through the proxy's kubeconfig is counted, reads, writes and conflicts, as a
// client of the counted config itself is: the processes are counted as the in-process
// implementations are.
func TestTheProxyCountsRequestsAsTheInProcessCounterDoes(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	exercise := func(t *testing.T, c client.Client) {
		ctx := context.Background()
		cm := &corev1.ConfigMap{}
		cm.Namespace, cm.Name = "default", "counted"
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			t.Fatal(err)
		}
		stale := cm.DeepCopy()
		cm.Data = map[string]string{"a": "b"}
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		stale.Data = map[string]string{"a": "c"}
		if err := c.Update(ctx, stale); err == nil {
			t.Fatal("an update of a stale resourceVersion succeeded")
		}
		if err := c.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	type counts struct{ reads, writes, conflicts float64 }
	measure := func(t *testing.T, proxied bool) counts {
		var requests reconciletest.Counter
		var conflicts conflictCounter
		cfg := conflicts.wrap(requests.Wrap(cp.Config))
		if proxied {
			proxy, err := startProxy(cfg, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := proxy.stop(); err != nil {
					t.Error(err)
				}
			}()
			if cfg, err = clientcmd.BuildConfigFromFlags("", proxy.kubeconfig); err != nil {
				t.Fatal(err)
			}
		}
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		requests.Reset()
		exercise(t, c)
		return counts{float64(requests.Reads()), objectWrites(&requests), conflicts.count()}
	}
	direct, proxied := measure(t, false), measure(t, true)
	if direct != proxied || direct.writes != 4 || direct.conflicts != 1 {
		t.Errorf("through the proxy %+v, directly %+v; want the same, with 4 writes and 1 conflict", proxied, direct)
	}
}
