package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/sharding"
)

// The scenarios shard ConfigMaps, each of which gets a Secret of the same name as its
// child: kinds every API server has.
const ring = "configmaps.test"

var (
	shardLabel = sharding.LabelShard(ring)
	drainLabel = sharding.LabelDrain(ring)
)

// Short leases, so that the scenarios are quick, yet long enough that an API server
// slowed by a busy machine does not take a shard's Lease from it.
var (
	leaseDuration = 8 * time.Second
	renewDeadline = 6 * time.Second
	retryPeriod   = time.Second
)

// reconciles is what every shard of a scenario reconciled, watched for two shards
// reconciling one object at once.
type reconciles struct {
	t       *testing.T
	mu      sync.Mutex
	running map[string]string // object to the shard reconciling it
	last    map[string]string // object to the shard that reconciled it last
	count   map[string]int    // by shard
}

func newReconciles(t *testing.T) *reconciles {
	return &reconciles{t: t, running: map[string]string{}, last: map[string]string{}, count: map[string]int{}}
}

// declaration declares shard's controller of ConfigMaps, which copies each to a Secret.
func (r *reconciles) declaration(shard string) *reconcile.Controller[*corev1.ConfigMap] {
	return reconcile.For(&corev1.ConfigMap{}, r.logic(shard), "copier", reconcile.WithChildren(&corev1.Secret{}))
}

func (r *reconciles) logic(shard string) reconcile.Logic[*corev1.ConfigMap] {
	return reconcile.LogicFunc[*corev1.ConfigMap](func(ctx context.Context, cm *corev1.ConfigMap, s reconcile.Scope) requeue.Outcome {
		r.mu.Lock()
		if other, ok := r.running[cm.Name]; ok {
			r.t.Errorf("%s reconciles %s while %s does", shard, cm.Name, other)
		}
		r.running[cm.Name] = shard
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			delete(r.running, cm.Name)
			r.last[cm.Name] = shard
			r.count[shard]++
			r.mu.Unlock()
		}()
		time.Sleep(20 * time.Millisecond) // long enough for a second shard to collide
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}, Data: map[string][]byte{"copy": []byte(cm.Data["v"])}}
		if _, _, err := ownership.Ensure(ctx, s.Writer, cm, secret); err != nil {
			return requeue.Retry(err)
		}
		return requeue.Done()
	})
}

func (r *reconciles) lastShard(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[name]
}

// replica is one running shard.
type replica struct {
	stop func()
	done chan error
}

// start runs a sharded manager named shard in ns until stopped.
func start(t *testing.T, cp *reconciletest.ControlPlane, ns, shard string, r *reconciles, extra ...manager.Runnable) *replica {
	t.Helper()
	return startShard(t, cp.Config, ns, shard, r.declaration(shard), extra...)
}

// startShard runs a manager of decl through cfg, as shard named shard in ns, until stopped.
func startShard(t *testing.T, cfg *rest.Config, ns, shard string, decl reconcile.Declaration, extra ...manager.Runnable) *replica {
	t.Helper()
	return startLeased(t, cfg, ns, shard, decl, leaseDuration, extra...)
}

// startLeased is startShard with a lease duration of the shard's own.
func startLeased(t *testing.T, cfg *rest.Config, ns, shard string, decl reconcile.Declaration, leaseDuration time.Duration, extra ...manager.Runnable) *replica {
	t.Helper()
	s, err := sharding.New(sharding.Options{Ring: ring, Name: shard, Controller: decl})
	if err != nil {
		t.Fatal(err)
	}
	m := reconcile.Manager{Controllers: []reconcile.Declaration{decl}, Options: ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Controller:              config.Controller{SkipNameValidation: new(true)},
		LeaderElectionNamespace: ns,
		LeaseDuration:           &leaseDuration, RenewDeadline: &renewDeadline, RetryPeriod: &retryPeriod,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	}}
	s.Configure(&m)
	mgr, err := m.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, runnable := range extra {
		if err := mgr.Add(runnable); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	rep := &replica{stop: cancel, done: make(chan error, 1)}
	go func() { rep.done <- s.Run(ctx, mgr) }()
	t.Cleanup(func() { rep.Stop(t) })
	return rep
}

// Stop stops the replica and waits for it to return; it may be called more than once.
func (r *replica) Stop(t *testing.T) {
	t.Helper()
	r.stop()
	if err, ok := <-r.done; ok {
		close(r.done)
		if err != nil {
			t.Errorf("the shard returned %v", err)
		}
	}
}

// await polls cond until it returns nil, failing the test after a minute.
func await(t *testing.T, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("still waiting: %v", last)
	}
}

// placed returns nil once every ConfigMap of ns, and its Secret, is labelled for the
// shard ring gives it, not draining, and last reconciled by that shard.
func placed(c client.Client, ns string, ring *sharding.Ring, r *reconciles) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var cms corev1.ConfigMapList
		if err := c.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{"test"}); err != nil {
			return err
		}
		for _, cm := range cms.Items {
			want := ring.Shard(sharding.Key("", "ConfigMap", ns, cm.Name))
			if got := cm.Labels[shardLabel]; got != want || cm.Labels[drainLabel] != "" {
				return fmt.Errorf("ConfigMap %s is labelled %q (drain %q), want %q", cm.Name, got, cm.Labels[drainLabel], want)
			}
			var secret corev1.Secret
			if err := c.Get(ctx, client.ObjectKeyFromObject(&cm), &secret); err != nil {
				return err
			}
			if got := secret.Labels[shardLabel]; got != want {
				return fmt.Errorf("Secret %s is labelled %q, want %q", cm.Name, got, want)
			}
			if got := r.lastShard(cm.Name); got != want {
				return fmt.Errorf("ConfigMap %s was last reconciled by %q, want %q", cm.Name, got, want)
			}
		}
		return nil
	}
}

// createConfigMaps creates the objects the tests' shards reconcile: n ConfigMaps cm-0 to
// cm-<n-1> in ns, labelled for the tests' caches.
func createConfigMaps(t *testing.T, c client.Client, ns string, n int) {
	t.Helper()
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"test": ""}}, Data: map[string]string{"v": fmt.Sprint(i)}}
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
}

func TestShardsSplitTheObjectsAndHandThemOverOneAtATime(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	const n = 40
	createConfigMaps(t, c, ns, n)

	// One shard: it has everything, as an unsharded operator would.
	a := start(t, cp, ns, "a", r)
	await(t, placed(c, ns, sharding.NewRing("a"), r))

	// A second shard takes its share, each object drained from the first before it is
	// assigned; the reconciles watch for an overlap all along.
	b := start(t, cp, ns, "b", r)
	await(t, placed(c, ns, sharding.NewRing("a", "b"), r))
	r.mu.Lock()
	t.Logf("two shards: a reconciled %d times, b %d", r.count["a"], r.count["b"])
	r.mu.Unlock()

	// A third joins and the first leaves cleanly: its Lease is released once its
	// reconciles have ended, and its objects go to the others at once, not after the
	// lease duration.
	start(t, cp, ns, "c", r)
	await(t, placed(c, ns, sharding.NewRing("a", "b", "c"), r))
	stopped := time.Now()
	a.Stop(t)
	var lease coordinationv1.Lease
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &lease); err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("the stopped shard's Lease is still held by %q", *h)
	}
	if lease.Labels[sharding.LabelRing] != ring {
		t.Errorf("the shard Lease is labelled %v, want the ring %q", lease.Labels, ring)
	}
	await(t, placed(c, ns, sharding.NewRing("b", "c"), r))
	t.Logf("a stopped shard's objects were reconciled by the others %v after it stopped", time.Since(stopped).Round(10*time.Millisecond))

	// A new object goes to its shard too.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late", Labels: map[string]string{"test": ""}}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	await(t, placed(c, ns, sharding.NewRing("b", "c"), r))
	b.Stop(t)
}

func TestAShardNeedsAValidRingNameAndController(t *testing.T) {
	copier := newReconciles(t).declaration("a")
	for _, tc := range []struct {
		name string
		opts sharding.Options
	}{
		{"no ring", sharding.Options{Name: "a", Controller: copier}},
		{"no name", sharding.Options{Ring: ring, Controller: copier}},
		{"no controller", sharding.Options{Ring: ring, Name: "a"}},
		{"a ring that makes no label", sharding.Options{Ring: "at/operator", Name: "a", Controller: copier}},
		{"a shard name that makes no Lease", sharding.Options{Ring: ring, Name: "Replica_0", Controller: copier}},
		{"a shard name too long for a label", sharding.Options{Ring: ring, Name: strings.Repeat("a", 64), Controller: copier}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sharding.New(tc.opts)
			if err == nil {
				t.Fatal("New accepted it")
			}
			t.Log(err)
		})
	}
}

func TestAShardThatLosesItsLeaseStopsWithAnError(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	a := start(t, cp, ns, "a", r)

	// Someone else takes the Lease, as the shard's would be taken after a partition.
	var lease coordinationv1.Lease
	await(t, func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, &lease)
	})
	await(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, &lease); err != nil {
			return err
		}
		lease.Spec.HolderIdentity = new("intruder")
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(time.Hour)}
		return c.Update(ctx, &lease)
	})
	select {
	case err := <-a.done:
		close(a.done)
		if err == nil {
			t.Error("the shard that lost its Lease returned no error")
		} else {
			t.Logf("the shard returned %q", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the shard that lost its Lease is still running")
	}
}

func TestAShardWhoseManagerFailsLeavesItsLeaseToExpire(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	failure := manager.RunnableFunc(func(ctx context.Context) error {
		select {
		case <-time.After(time.Second):
			return errors.New("the manager failed")
		case <-ctx.Done():
			return nil
		}
	})
	a := start(t, cp, ns, "a", r, failure)
	select {
	case err := <-a.done:
		close(a.done)
		if err == nil {
			t.Fatal("the shard whose manager failed returned no error")
		}
	case <-time.After(time.Minute):
		t.Fatal("the shard whose manager failed is still running")
	}
	// Its reconciles may not have ended: the Lease is still its own, until it expires.
	var lease coordinationv1.Lease
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, &lease); err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h == nil || *h != "a" {
		t.Errorf("the Lease is held by %q, want still by the shard", ptr.Deref(h, ""))
	}
}

func TestTheNextShardAssignsOnceTheAssigningOnesLeaseExpires(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)
	r := newReconciles(t)
	const n = 20
	createConfigMaps(t, c, ns, n)

	// "a" is the first live shard, so it assigns; its manager fails without releasing
	// its Lease, as a killed process's would be left.
	fail := make(chan struct{})
	failure := manager.RunnableFunc(func(ctx context.Context) error {
		select {
		case <-fail:
			return errors.New("the manager failed")
		case <-ctx.Done():
			return nil
		}
	})
	a := start(t, cp, ns, "a", r, failure)
	start(t, cp, ns, "b", r)
	await(t, placed(c, ns, sharding.NewRing("a", "b"), r))

	close(fail)
	failed := time.Now()
	if err := <-a.done; err == nil {
		t.Error("the shard whose manager failed returned no error")
	}
	close(a.done)
	// "b" assigns the objects and children "a" had to itself once the Lease expires,
	// not before: "a" may still have been reconciling.
	await(t, placed(c, ns, sharding.NewRing("b"), r))
	took := time.Since(failed)
	if took < leaseDuration-2*retryPeriod {
		t.Errorf("the objects moved %v after the failure, before the Lease could have expired", took)
	}
	t.Logf("the assigning shard's objects were reconciled by the next %v after its manager failed (lease %v)", took.Round(10*time.Millisecond), leaseDuration)
}
