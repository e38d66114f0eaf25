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
// between scrapes (live-B/op, once) and what a scrape allocates (B/op).
func BenchmarkConditionSeries(b *testing.B) {
	const objects = 10000
	types4 := []string{"Ready", "Reconciling", "Stalled", "Succeeded"}
	key := func(i int) types.NamespacedName {
		return types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("object-%d", i)}
	}
	b.Run("at-scrape", func(b *testing.B) {
		before := liveHeap()
		m := &observer{kind: "At", seen: map[types.NamespacedName][]condition{}}
		for i := range objects {
			var cs []condition
			for _, t := range types4 {
				cs = append(cs, condition{unique.Make(t), unique.Make("False")})
			}
			m.seen[key(i)] = cs
		}
		c := &conditionCollector{desc: conditionSeries.desc, observers: nil}
		c.add(m)
		registry := prometheus.NewRegistry()
		registry.MustRegister(c)
		kept := float64(liveHeap()-before) / objects
		b.ReportAllocs()
		for b.Loop() {
			if _, err := registry.Gather(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(kept, "kept-B/object")
		runtime.KeepAlive(m)
	})
	b.Run("gaugevec", func(b *testing.B) {
		before := liveHeap()
		vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "reconcilekit_condition", Help: "h"}, []string{"kind", "namespace", "name", "type", "status"})
		seen := map[types.NamespacedName][]condition{}
		for i := range objects {
			k := key(i)
			var cs []condition
			for _, t := range types4 {
				cs = append(cs, condition{unique.Make(t), unique.Make("False")})
				vec.WithLabelValues("At", k.Namespace, k.Name, t, "False").Set(1)
			}
			seen[k] = cs
		}
		registry := prometheus.NewRegistry()
		registry.MustRegister(vec)
		kept := float64(liveHeap()-before) / objects
		b.ReportAllocs()
		for b.Loop() {
			if _, err := registry.Gather(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(kept, "kept-B/object")
		runtime.KeepAlive(vec)
		runtime.KeepAlive(seen)
	})
}

// liveHeap returns the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}
