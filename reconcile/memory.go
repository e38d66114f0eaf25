package reconcile

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/statusfield"
)

// DefaultExpectationTimeout is how long the shell waits, at most, for the cache to show an
// object as the shell last wrote it (see WithExpectationTimeout).
const DefaultExpectationTimeout = 10 * time.Second

// DefaultProgressInterval is how often, at most, the shell writes progress alone (see
// WithProgressInterval).
const DefaultProgressInterval = 30 * time.Second

// WithExpectationTimeout bounds read-your-own-writes. After each write to its object the
// shell remembers the resourceVersion the API server answered, and runs no logic on a cached
// copy older than that (resourceVersions of one resource are ordered since Kubernetes 1.35):
// a reconcile on such a copy would decide from a status the shell itself has already
// replaced, redo work and meet a conflict. The reconcile is put off until the watch delivers
// the write, which brings the object back by itself, or until timeout has passed, so that a
// lost event cannot hold an object forever. 0 turns read-your-own-writes off.
func WithExpectationTimeout(timeout time.Duration) Option {
	return func(o *options) { o.memory.expectationTimeout = timeout }
}

// WithProgressInterval paces the writes of progress. While an object is Reconciling, before
// and after a reconcile, and no condition changes its status (nor the phase of an object
// with GetPhase, such as a phase.Object, nor observedGeneration), what changed is progress:
// a count, a list of names, a condition's message or reason. The shell writes it at once
// if it wrote nothing for the object in the last interval, and otherwise when the interval
// has passed since that write, or earlier with the next change that is more than progress
// (a condition's status, the object becoming Ready). So a rollout that goes well costs two
// status writes (Reconciling, then Ready) however many steps it takes, and one that hangs
// still shows its progress within the interval. 0 writes every change at once.
func WithProgressInterval(interval time.Duration) Option {
	return func(o *options) { o.memory.progressInterval = interval }
}

// memoryOptions are the options of the memory of the shell's writes.
type memoryOptions struct {
	expectationTimeout time.Duration // WithExpectationTimeout; 0: no read-your-own-writes
	progressInterval   time.Duration // WithProgressInterval; 0: every change written at once
}

// memory is what the shell remembers of its own writes, per object: the resourceVersion it
// expects the cache to reach, and when it last wrote the object's status while the object
// was reconciling. An object is forgotten once the cache has reached the write and the
// object is no longer reconciling, so the memory holds the objects in flight only. It also
// knows which reconciles are running for which object, so that the watch event of a write
// is dropped only when no reconcile but the one that made it may have read the object from
// before it.
type memory struct {
	mu      sync.Mutex
	objects map[types.NamespacedName]*written
	running map[types.NamespacedName][]visit       // reconciles running, by object
	writes  map[types.NamespacedName]chan struct{} // closed once the write in flight is remembered
	next    visit
}

// inFlightWait bounds how long the watch of the reconciled kind waits for the answer to a
// write whose event it holds: the answer is already on its way then, so only a request
// that failed in flight can take this long.
const inFlightWait = 5 * time.Second

// visit tells one reconcile from every other, so that a write is known by who made it.
type visit uint64

type written struct {
	rv         string    // the resourceVersion of the shell's last write, until the cache shows it
	at         time.Time // when the shell wrote it
	inProgress bool      // the status written was Reconciling
	awaited    bool      // a reconcile was put off until the cache shows rv
	by         visit     // the reconcile that made the write
	shared     bool      // another reconcile of the object was running as the write was made
}

func newMemory() *memory {
	return &memory{objects: map[types.NamespacedName]*written{}, running: map[types.NamespacedName][]visit{}, writes: map[types.NamespacedName]chan struct{}{}}
}

// writing records that a write of key is in flight, until the func it returns is called,
// after the write has been remembered (wrote) or has failed.
func (m *memory) writing(key types.NamespacedName) (done func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := make(chan struct{})
	m.writes[key] = ch
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.writes[key] == ch {
			delete(m.writes, key)
		}
		close(ch)
	}
}

// enter records that a reconcile of key runs, until the func it returns is called; the
// visit names that reconcile's writes (see wrote).
func (m *memory) enter(key types.NamespacedName) (v visit, exit func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	v = m.next
	m.running[key] = append(m.running[key], v)
	return v, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		running := slices.DeleteFunc(m.running[key], func(o visit) bool { return o == v })
		if len(running) == 0 {
			delete(m.running, key)
			return
		}
		m.running[key] = running
	}
}

// othersRunning reports whether a reconcile of key other than v is running.
func (m *memory) othersRunning(key types.NamespacedName, v visit) bool {
	return slices.ContainsFunc(m.running[key], func(o visit) bool { return o != v })
}

// echo reports whether an update of key to rv is the watch event of the shell's own last
// write, which no reconcile needs. The reconcile that made the write needs it least: it
// decided from what it read and wrote the result, and, should it run on, it holds the
// object as written. So the event is dropped unless another reconcile of key, which may
// have read the object from before the write, was running as the write was made or runs
// now, or a reconcile was put off to wait for it. (controller-runtime runs one reconcile of
// an object at a time, so the others are callers of Reconcile from outside its queue.)
// An event that comes while a write of key is in flight waits for that write's answer, so
// that the write is known when the event is judged. The cache holds the write by then (an
// informer updates its store before it hands out the event), so the write is forgotten as
// behind forgets it.
func (m *memory) echo(key types.NamespacedName, rv string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if inFlight, ok := m.writes[key]; ok {
		// The API server may send the event before its answer to the write has reached
		// the shell; the answer is on its way.
		m.mu.Unlock()
		select {
		case <-inFlight:
		case <-time.After(inFlightWait):
		}
		m.mu.Lock()
	}
	w, ok := m.objects[key]
	if !ok || w.rv == "" || w.rv != rv || w.awaited || w.shared || m.othersRunning(key, w.by) {
		return false
	}
	w.rv = ""
	if !w.inProgress {
		delete(m.objects, key)
	}
	return true
}

// wrote records that the shell's write of key, made by the reconcile by, returned rv at
// now; inProgress says the status written says Reconciling.
func (m *memory) wrote(key types.NamespacedName, by visit, rv string, now time.Time, inProgress bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rv == "" && !inProgress { // nothing to wait for, nothing to pace
		delete(m.objects, key)
		return
	}
	m.objects[key] = &written{rv: rv, at: now, inProgress: inProgress, by: by, shared: m.othersRunning(key, by)}
}

// behind reports whether the cached copy of key, at cachedRV, is older than the shell's last
// write of it, and if so how long to wait at most for the watch. A copy that has caught up,
// an expectation older than timeout and a resourceVersion that is not an ordered number
// (an aggregated API may serve such) each end the wait.
func (m *memory) behind(key types.NamespacedName, cachedRV string, now time.Time, timeout time.Duration) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.objects[key]
	if !ok || w.rv == "" {
		return 0, false
	}
	cmp, err := resourceversion.CompareResourceVersion(cachedRV, w.rv)
	if wait := timeout - now.Sub(w.at); err == nil && cmp < 0 && wait > 0 {
		w.awaited = true
		return wait, true
	}
	w.rv = ""
	if !w.inProgress {
		delete(m.objects, key)
	}
	return 0, false
}

// lastProgress returns when the shell last wrote key's status while it was reconciling.
func (m *memory) lastProgress(key types.NamespacedName) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.objects[key]
	if !ok || !w.inProgress {
		return time.Time{}, false
	}
	return w.at, true
}

func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
}

// phased is an object whose status has a phase, such as a phase.Object; a change of phase
// is more than progress. It is declared here because reconcile does not import phase.
type phased interface{ GetPhase() string }

// onlyProgress reports whether after differs from before in progress only: both are
// Reconciling, every condition has the status it had, the phase (of a phased object), the
// observedGeneration and the metadata the shell writes are the same. Objects without
// conditions have no progress.
func onlyProgress(before, after client.Object) bool {
	b, ok := before.(conditions.Getter)
	if !ok {
		return false
	}
	a := after.(conditions.Getter)
	if !conditions.IsTrue(b, conditions.Reconciling) || !conditions.IsTrue(a, conditions.Reconciling) || len(a.GetConditions()) != len(b.GetConditions()) {
		return false
	}
	for _, c := range a.GetConditions() {
		if old := conditions.Find(b, c.Type); old == nil || old.Status != c.Status {
			return false
		}
	}
	if p, ok := before.(phased); ok && p.GetPhase() != after.(phased).GetPhase() {
		return false
	}
	return observedGeneration(before) == observedGeneration(after) &&
		equality.Semantic.DeepEqual(before.GetLabels(), after.GetLabels()) &&
		equality.Semantic.DeepEqual(before.GetAnnotations(), after.GetAnnotations()) &&
		equality.Semantic.DeepEqual(before.GetFinalizers(), after.GetFinalizers())
}

// observedGeneration is obj's status.observedGeneration, or -1 without one.
func observedGeneration(obj client.Object) int64 {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return -1
	}
	if f, ok := statusfield.Of(v.Type()); ok && f.Type.Kind() == reflect.Struct {
		s := v.Elem().FieldByIndex(f.Index)
		if g := s.FieldByName("ObservedGeneration"); g.IsValid() && g.CanInt() {
			return g.Int()
		}
	}
	return -1
}

// reconciling reports whether obj's conditions say Reconciling.
func reconciling(obj client.Object) bool {
	g, ok := obj.(conditions.Getter)
	return ok && conditions.IsTrue(g, conditions.Reconciling)
}

type visitKey struct{}

// withVisit returns ctx carrying the reconcile v, so that the writes made under it are
// known as v's.
func withVisit(ctx context.Context, v visit) context.Context {
	return context.WithValue(ctx, visitKey{}, v)
}

// visitOf returns the reconcile ctx carries, or 0, which is no reconcile.
func visitOf(ctx context.Context) visit {
	v, _ := ctx.Value(visitKey{}).(visit)
	return v
}
