package reliability

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	atv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	memcachedv1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	podsetv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
)

var soakFor = flag.Duration("soak", 0, "run the churn soak for this long, as `make soak DURATION=1h` does; "+
	"otherwise it churns for two minutes in the full pass and for twenty seconds in the short one")

// soakDuration is how long the churn soak churns.
func soakDuration() time.Duration {
	switch {
	case *soakFor > 0:
		return *soakFor
	case *full:
		return 2 * time.Minute
	}
	return 20 * time.Second
}

// footprint is what the test process holds, the three operators with it: the heap live
// after a collection, and the goroutines.
type footprint struct {
	heap       uint64
	goroutines int
}

func measure() footprint {
	// Twice: finalizers queued by the first collection free more in the second.
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return footprint{heap: m.HeapAlloc, goroutines: goruntime.NumGoroutine()}
}

func (f footprint) String() string {
	return fmt.Sprintf("heap %.1f MiB, %d goroutines", float64(f.heap)/(1<<20), f.goroutines)
}

// leaked says how end grew from start beyond what a process that keeps the same objects
// may grow, or is empty. The caches hold as many objects at the end as at the start, so
// the bounds leave room for noise only: a quarter of the heap and 4 MiB (the ledger of
// names created grows by a hundred bytes or so an object), and 10% and 20 goroutines
// (connections come and go).
func leaked(start, end footprint) string {
	var why string
	if limit := start.heap + start.heap/4 + 4<<20; end.heap > limit {
		why = fmt.Sprintf("the heap grew from %.1f MiB to %.1f MiB", float64(start.heap)/(1<<20), float64(end.heap)/(1<<20))
	}
	if limit := start.goroutines + max(20, start.goroutines/10); end.goroutines > limit {
		if why != "" {
			why += "; "
		}
		why += fmt.Sprintf("the goroutines grew from %d to %d", start.goroutines, end.goroutines)
	}
	return why
}

// pool is the objects of one kind that the churn keeps alive, by name.
type pool struct {
	op      *operator
	names   []string
	deleted []string
	next    int // the number in the next name: a name is never used twice
}

func (p *pool) create(t *testing.T, c client.Client, ns string) {
	name := fmt.Sprintf("%s-%d", p.op.name, p.next)
	if err := c.Create(t.Context(), p.op.object(ns, name, p.next)); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	p.next++
	p.names = append(p.names, name)
}

func (p *pool) delete(t *testing.T, c client.Client, ns string, random *rand.Rand) {
	i := random.IntN(len(p.names))
	obj := p.op.empty()
	obj.SetNamespace(ns)
	obj.SetName(p.names[i])
	if err := c.Delete(t.Context(), obj); err != nil {
		t.Fatalf("deleting %s: %v", p.names[i], err)
	}
	p.deleted = append(p.deleted, p.names[i])
	p.names = append(p.names[:i], p.names[i+1:]...)
}

// churn does one thing a user might: creates an object, deletes one, or resizes one.
// The pool stays between half and one and a half times size.
func (p *pool) churn(t *testing.T, c client.Client, ns string, size int, random *rand.Rand) {
	switch n := len(p.names); {
	case n < size/2+1:
		p.create(t, c, ns)
	case n > size*3/2:
		p.delete(t, c, ns, random)
	default:
		switch random.IntN(3) {
		case 0:
			p.create(t, c, ns)
		case 1:
			p.delete(t, c, ns, random)
		default:
			if p.op.resize == nil {
				p.create(t, c, ns)
				return
			}
			p.op.resizeNamed(t, c, ns, p.names[random.IntN(len(p.names))])
		}
	}
}

// settle brings the pool back to size objects.
func (p *pool) settle(t *testing.T, c client.Client, ns string, size int, random *rand.Rand) {
	for len(p.names) < size {
		p.create(t, c, ns)
	}
	for len(p.names) > size {
		p.delete(t, c, ns, random)
	}
}

func TestContinuousChurnLeaksNothingAndMissesNothing(t *testing.T) {
	const size = 10 // objects of each kind the churn keeps alive, on average
	duration := soakDuration()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	seed := rand.Uint64()
	random := rand.New(rand.NewPCG(seed, seed))
	t.Logf("churning for %v, with seed %d", duration, seed)

	var created ledger
	pools := make([]*pool, len(operators))
	for i, op := range operators {
		watchStatus(t, ns, op)
		op.start(t, created.wrap(op.config(t)), ns)
		pools[i] = &pool{op: op}
	}
	// A burst of two actions a second: enough to keep every operator busy, little enough
	// that a shared machine keeps up for an hour.
	churnFor := func(d time.Duration) (actions int) {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for end := time.Now().Add(d); time.Now().Before(end); actions++ {
			pools[random.IntN(len(pools))].churn(t, admin, ns, size, random)
			<-tick.C
		}
		return actions
	}
	// settled waits until the pools hold size objects each, all converged, with nothing
	// left of the deleted ones.
	settled := func() {
		t.Helper()
		for _, p := range pools {
			p.settle(t, admin, ns, size, random)
		}
		await(t, 10*time.Minute, func(ctx context.Context) error {
			if err := converged(ctx, admin, ns, operators...); err != nil {
				return err
			}
			return orphans(ctx, admin, ns)
		})
	}

	// The first tenth warms up what a process creates once: connections, informers,
	// event broadcasters, workers.
	warmUp := max(10*time.Second, duration/10)
	actions := churnFor(warmUp)
	settled()
	start := measure()
	t.Logf("after %v of warm-up (%d actions): %v", warmUp, actions, start)

	samples := max(1, int(duration/(5*time.Minute)))
	for i := range samples {
		actions += churnFor(duration / time.Duration(samples))
		t.Logf("%v into the churn (%d actions): %v", time.Duration(i+1)*duration/time.Duration(samples), actions, measure())
	}
	settled()
	end := measure()

	var deleted []string
	for _, p := range pools {
		deleted = append(deleted, p.deleted...)
	}
	pods, recreated := created.checkDeleted(t, named(deleted...))
	t.Logf("%d actions over %v (%d Memcacheds, %d PodSets, %d Ats created in all, %d At pods, %d children created again for an owner being deleted, all collected); at the start %v, at the end %v",
		actions, warmUp+duration, pools[0].next, pools[1].next, pools[2].next, pods, recreated, start, end)
	if why := leaked(start, end); why != "" {
		t.Errorf("a leak: %s, for the same %d objects of each kind", why, size)
	}
}

// orphans returns nil once every Service, Deployment and At pod in ns is owned by an
// object that still exists: the garbage collector has finished with the deleted ones,
// and with what an operator created again for them.
func orphans(ctx context.Context, c client.Client, ns string) error {
	owners := map[types.UID]bool{}
	for _, list := range []client.ObjectList{&memcachedv1beta1.MemcachedList{}, &podsetv1alpha1.PodSetList{}, &atv1alpha1.AtList{}} {
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			owners[o.(client.Object).GetUID()] = true
			return nil
		}); err != nil {
			return err
		}
	}
	var deployments appsv1.DeploymentList
	if err := c.List(ctx, &deployments, client.InNamespace(ns)); err != nil {
		return err
	}
	var atPods corev1.PodList
	if err := c.List(ctx, &atPods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/managed-by": "at-operator"}); err != nil {
		return err
	}
	var services corev1.ServiceList
	if err := c.List(ctx, &services, client.InNamespace(ns)); err != nil {
		return err
	}
	var children []client.Object
	for i := range services.Items {
		children = append(children, &services.Items[i])
	}
	for i := range deployments.Items {
		children = append(children, &deployments.Items[i])
	}
	for i := range atPods.Items {
		children = append(children, &atPods.Items[i])
	}
	for _, child := range children {
		if owner := metav1.GetControllerOf(child); owner == nil || !owners[owner.UID] {
			return fmt.Errorf("%s outlived its owner", child.GetName())
		}
	}
	return nil
}
