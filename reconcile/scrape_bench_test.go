package reconcile

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkConditionSeries compares reconcilekit_condition built at scrape time from the
// objects the cache holds with the GaugeVec it replaced, for 10000 objects of four
// conditions each: the heap each keeps between scrapes beyond the objects
// (kept-B/object) and what a scrape allocates (B/op).
func BenchmarkConditionSeries(b *testing.B) {
	const objects = 10000
	types4 := []string{"Ready", "Reconciling", "Stalled", "Succeeded"}
	var held heldObjects // as the cache holds them
	for i := range objects {
		obj := &heldObject{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("object-%d", i), UID: types.UID(fmt.Sprint(i))}}
		for _, t := range types4 {
			obj.conditions = append(obj.conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse})
		}
		held = append(held, obj)
	}
	tests := []struct {
		name string
		// collector returns the collector of the series, and what must stay alive for it.
		collector func() (prometheus.Collector, any)
	}{
		{"at-scrape", func() (prometheus.Collector, any) {
			m := &observer{kind: "At", source: held}
			m.active.Store(true)
			c := &conditionCollector{desc: conditionSeries.desc}
			c.add(m)
			return c, m
		}},
		{"gaugevec", func() (prometheus.Collector, any) {
			vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "reconcilekit_condition", Help: "the series, kept"}, []string{"kind", "namespace", "name", "type", "status"})
			for _, obj := range held {
				for _, c := range obj.conditions {
					vec.WithLabelValues("At", obj.Namespace, obj.Name, c.Type, string(c.Status)).Set(1)
				}
			}
			return vec, nil
		}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			before := liveHeap()
			collector, alive := tt.collector()
			kept := (float64(liveHeap()) - float64(before)) / objects
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
	runtime.KeepAlive(held)
}

// heldObject is an object with conditions, as a cache holds one.
type heldObject struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	conditions []metav1.Condition
}

func (o *heldObject) DeepCopyObject() k8sruntime.Object  { c := *o; return &c }
func (o *heldObject) GetConditions() []metav1.Condition  { return o.conditions }
func (o *heldObject) SetConditions(c []metav1.Condition) { o.conditions = c }

// heldObjects are objects as a cache holds them.
type heldObjects []*heldObject

func (h heldObjects) each(_ context.Context, f func(client.Object)) error {
	for _, obj := range h {
		f(obj)
	}
	return nil
}

// liveHeap returns the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}
