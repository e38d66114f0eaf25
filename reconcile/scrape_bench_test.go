package reconcile

import (
	"fmt"
	"runtime"
	"testing"
	"unique"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkConditionSeries compares reconcilekit_condition built at scrape time with the
// GaugeVec it replaced, for 10000 objects of four conditions each: the heap each keeps
// between scrapes (kept-B/object) and what a scrape allocates (B/op).
func BenchmarkConditionSeries(b *testing.B) {
	const objects = 10000
	types4 := []string{"Ready", "Reconciling", "Stalled", "Succeeded"}
	// seen returns what an observer keeps of the objects, calling each for every condition.
	seen := func(each func(key types.NamespacedName, typ string)) map[types.NamespacedName][]condition {
		s := map[types.NamespacedName][]condition{}
		for i := range objects {
			key := types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("object-%d", i)}
			for _, t := range types4 {
				s[key] = append(s[key], condition{unique.Make(t), unique.Make("False")})
				each(key, t)
			}
		}
		return s
	}
	tests := []struct {
		name string
		// collector returns the collector of the series, and what must stay alive for it.
		collector func() (prometheus.Collector, any)
	}{
		{"at-scrape", func() (prometheus.Collector, any) {
			m := &observer{kind: "At", seen: seen(func(types.NamespacedName, string) {})}
			c := &conditionCollector{desc: conditionSeries.desc}
			c.add(m)
			return c, m
		}},
		{"gaugevec", func() (prometheus.Collector, any) {
			vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "reconcilekit_condition", Help: "the series, kept"}, []string{"kind", "namespace", "name", "type", "status"})
			s := seen(func(key types.NamespacedName, typ string) {
				vec.WithLabelValues("At", key.Namespace, key.Name, typ, "False").Set(1)
			})
			return vec, s
		}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			before := liveHeap()
			collector, alive := tt.collector()
			kept := float64(liveHeap()-before) / objects
			registry := prometheus.NewRegistry() // as controller-runtime's
			registry.MustRegister(collector)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := registry.Gather(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(kept, "kept-B/object")
			runtime.KeepAlive(alive)
		})
	}
}

// liveHeap returns the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}
