package sharding

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The metrics of every assigner in the process, served on controller-runtime's registry.
// They are registered when an assigner is created (registerMetrics), not on import, and a
// second registration is no error, so that several managers in one process (tests, or an
// operator with a ring for each of its kinds) share them: each assigner reports its own
// series, labelled with its ring and shard.
const (
	// MetricUnassigned is the number of the ring's objects that no live shard holds: new
	// ones not labelled yet, ones a draining shard let go, and ones on a shard whose Lease
	// expired or was released. Only the shard that assigns knows them; the others report 0.
	MetricUnassigned = "reconcilekit_sharding_unassigned_objects"
	// MetricUnassignedOldest is how long, in seconds, the oldest of those objects has been
	// waiting, counted from when the shard that assigns first saw it without a live shard
	// (0 when none waits). A value that only grows means an object that no shard takes.
	MetricUnassignedOldest = "reconcilekit_sharding_unassigned_oldest_seconds"
	// MetricAssigning is 1 on the shard that assigns (the first live shard) and 0 on the
	// others: a ring whose sum is 0 for long has nobody assigning.
	MetricAssigning = "reconcilekit_sharding_assigning"
	// MetricChildrenReleased counts the children a shard let go of because their owner was
	// not its own (a child left behind in a handover), so that the assigner gives them
	// their owner's shard.
	MetricChildrenReleased = "reconcilekit_sharding_children_released_total"
)

var (
	unassignedDesc = prometheus.NewDesc(MetricUnassigned,
		"Objects of the ring that no live shard holds, as the shard that assigns sees them (0 on the others).",
		[]string{"ring", "shard"}, nil)
	oldestDesc = prometheus.NewDesc(MetricUnassignedOldest,
		"How long the oldest object of the ring that no live shard holds has waited, in seconds (0 when none waits).",
		[]string{"ring", "shard"}, nil)
	assigningDesc = prometheus.NewDesc(MetricAssigning,
		"1 on the shard that assigns the ring's objects, 0 on the others.",
		[]string{"ring", "shard"}, nil)
	releasedDesc = prometheus.NewDesc(MetricChildrenReleased,
		"Children the shard let go of because their owner was not its own, for the assigner to give them their owner's shard.",
		[]string{"ring", "shard"}, nil)
)

// assignerMetrics collects the series of the assigners running in the process. Their
// values are read when scraped: the age of the oldest waiting object grows by itself.
type assignerMetrics struct {
	mu        sync.Mutex
	assigners map[*assigner]struct{}
}

var collector = &assignerMetrics{assigners: map[*assigner]struct{}{}}

// registerMetrics registers the sharding metrics on controller-runtime's registry unless
// they are already.
func registerMetrics() error {
	err := metrics.Registry.Register(collector)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		return nil
	}
	return err
}

// add reports a's series until remove.
func (m *assignerMetrics) add(a *assigner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.assigners[a] = struct{}{}
}

// remove ends a's series.
func (m *assignerMetrics) remove(a *assigner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.assigners, a)
}

// Describe implements prometheus.Collector.
func (m *assignerMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- unassignedDesc
	ch <- oldestDesc
	ch <- assigningDesc
	ch <- releasedDesc
}

// Collect implements prometheus.Collector. Assigners of one ring and shard name in one
// process (a test's restarted shard) are added up, since a series must be reported once.
func (m *assignerMetrics) Collect(ch chan<- prometheus.Metric) {
	type series struct{ unassigned, oldest, assigning, released float64 }
	all := map[[2]string]*series{}
	now := time.Now()
	m.mu.Lock()
	for a := range m.assigners {
		key := [2]string{a.shard.opts.Ring, a.shard.opts.Name}
		s := all[key]
		if s == nil {
			s = &series{}
			all[key] = s
		}
		// Only the shard that assigns knows what waits; one that just stopped may still
		// hold what its last session met.
		if a.isActing() {
			n, oldest, _ := a.waiting.stats(now)
			s.unassigned += float64(n)
			s.oldest = max(s.oldest, oldest.Seconds())
			s.assigning = 1
		}
		s.released += float64(a.released.Load())
	}
	m.mu.Unlock()
	for key, s := range all {
		ch <- prometheus.MustNewConstMetric(unassignedDesc, prometheus.GaugeValue, s.unassigned, key[0], key[1])
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, s.oldest, key[0], key[1])
		ch <- prometheus.MustNewConstMetric(assigningDesc, prometheus.GaugeValue, s.assigning, key[0], key[1])
		ch <- prometheus.MustNewConstMetric(releasedDesc, prometheus.CounterValue, s.released, key[0], key[1])
	}
}

// waiting remembers the objects that no live shard holds, as the assigner meets them, and
// since when: the first time it saw each without a live shard.
type waiting struct {
	mu    sync.Mutex
	since map[types.NamespacedName]time.Time
}

// add records that key has no live shard, from now unless it was waiting already.
func (w *waiting) add(key types.NamespacedName, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since == nil {
		w.since = map[types.NamespacedName]time.Time{}
	}
	if _, ok := w.since[key]; !ok {
		w.since[key] = now
	}
}

// remove records that key has a live shard, or is gone.
func (w *waiting) remove(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.since, key)
}

// reset forgets every object: a shard that no longer assigns does not know them.
func (w *waiting) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since = nil // a map keeps its largest size; a new one starts small
}

// stats returns how many objects wait, how long the oldest has, and which one it is.
func (w *waiting) stats(now time.Time) (int, time.Duration, types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var oldest time.Time
	var which types.NamespacedName
	for key, since := range w.since {
		if oldest.IsZero() || since.Before(oldest) {
			oldest, which = since, key
		}
	}
	if oldest.IsZero() {
		return 0, 0, which
	}
	return len(w.since), now.Sub(oldest), which
}
