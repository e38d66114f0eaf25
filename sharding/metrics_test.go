package sharding_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/sharding"
)

// shardMetric returns the value of the sharding metric name for shard of the tests' ring,
// as controller-runtime's registry serves it, and whether there is one.
func shardMetric(t *testing.T, name, shard string) (float64, bool) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["ring"] != ring || labels["shard"] != shard {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// metricIs returns a condition that holds once shard's metric name is want.
func metricIs(t *testing.T, name, shard string, want float64) func(context.Context) error {
	return func(context.Context) error {
		got, ok := shardMetric(t, name, shard)
		if !ok {
			return fmt.Errorf("shard %s serves no %s", shard, name)
		}
		if got != want {
			return fmt.Errorf("shard %s's %s is %v, want %v", shard, name, got, want)
		}
		return nil
	}
}

func TestObjectsWithoutALiveShardAreCountedUntilAssigned(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)

	// The assigner's labels are refused until the test lets them through: the objects
	// wait, as they would for an API server that refuses or a shard that never comes.
	var refuse atomic.Bool
	refuse.Store(true)
	cfg := reconciletest.Intercept(cp.Config, func(r *reconciletest.Request) (*http.Response, error) {
		if refuse.Load() && r.Verb == "patch" && r.Resource == "configmaps" {
			return r.Fail(http.StatusServiceUnavailable, "the test refuses the label"), nil
		}
		return r.Send()
	})
	const n = 5
	createWithSecrets(t, c, ns, "waiting", n)
	startIdle(t, cfg, ns, "a")

	for _, step := range []struct {
		name    string
		refuse  bool
		metrics map[string]float64
	}{
		{"refused, the objects wait and are counted", true, map[string]float64{sharding.MetricUnassigned: n, sharding.MetricAssigning: 1}},
		{"let through, they are assigned and no longer counted", false, map[string]float64{sharding.MetricUnassigned: 0, sharding.MetricUnassignedOldest: 0, sharding.MetricAssigning: 1}},
	} {
		t.Run(step.name, func(t *testing.T) {
			refuse.Store(step.refuse)
			for name, want := range step.metrics {
				await(t, metricIs(t, name, "a", want))
			}
			if step.refuse {
				// The oldest has waited since the assigner first saw it.
				await(t, func(context.Context) error {
					if oldest, _ := shardMetric(t, sharding.MetricUnassignedOldest, "a"); oldest <= 0 {
						return fmt.Errorf("the oldest object waits %vs", oldest)
					}
					return nil
				})
			} else {
				await(t, labelledAlike(c, ns, sharding.NewRing("a"), true))
			}
		})
	}

	// A second shard in the same process registers the same metrics again, without an
	// error, and serves series of its own: it does not assign.
	startIdle(t, cp.Config, ns, "b")
	await(t, metricIs(t, sharding.MetricAssigning, "b", 0))
	await(t, metricIs(t, sharding.MetricUnassigned, "b", 0))
	await(t, metricIs(t, sharding.MetricAssigning, "a", 1))
}
