package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// watches looks into the operators' watch streams: how many were opened, how many broke
// before the server ended them, and how many the server ended because the version they
// resumed from was too old (410 Gone), after which an informer starts again from the
// current state.
type watches struct {
	opened, broken, expired atomic.Int64
}

func (w *watches) wrap(cfg *rest.Config) *rest.Config {
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		resp, err := r.Send()
		if r.Verb != "watch" || err != nil {
			return resp, err
		}
		w.opened.Add(1)
		if resp.StatusCode == http.StatusGone {
			w.expired.Add(1)
			return resp, nil
		}
		resp.Body = &watchBody{ReadCloser: resp.Body, w: w}
		return resp, nil
	})
}

// watchBody counts a stream that breaks, and one that ends with an expiry: the API server
// reports a watch from a compacted version in the stream, as an ERROR event whose status
// says the version is "too old" (the watch cache's words and etcd's differ after that),
// whatever the encoding.
type watchBody struct {
	io.ReadCloser
	w       *watches
	tail    []byte // the end of what was read, for a message split across reads
	counted bool
}

var tooOld = []byte("too old")

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.counted {
		b.tail = append(b.tail, p[:n]...)
		if bytes.Contains(b.tail, tooOld) {
			b.counted = true
			b.w.expired.Add(1)
		}
		b.tail = b.tail[max(0, len(b.tail)-len(tooOld)):]
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		if !b.counted {
			b.counted = true
			b.w.broken.Add(1)
		}
	}
	return n, err
}

// networkScenario is what the scenarios of a network between the operators and their API
// server share: the operators started through a proxy, watched for duplicates and
// regressions.
type networkScenario struct {
	admin   client.Client
	ns      string
	proxy   *reconciletest.Proxy
	created ledger
	watches watches
	tried   reconciletest.Counter
}

func startBehindProxy(t *testing.T) *networkScenario {
	t.Helper()
	s := &networkScenario{admin: cp.Client(t, scheme), ns: cp.RestrictedNamespace(t), proxy: cp.StartProxy(t)}
	for _, op := range operators {
		watchStatus(t, s.ns, op)
		// The ledger next to the server; the proxy, a network, between it and the rest.
		op.start(t, s.tried.Wrap(s.watches.wrap(s.proxy.Wrap(s.created.wrap(op.config(t))))), s.ns)
	}
	return s
}

func TestOperatorsCatchUpAfterTheAPIServerIsUnreachable(t *testing.T) {
	size := sized()
	partition := 20 * time.Second
	if *full {
		partition = 2 * time.Minute
	}
	s := startBehindProxy(t)
	for _, op := range operators {
		op.create(t, s.admin, s.ns, op.name+"-before", size.objects)
	}
	await(t, size.limit, func(ctx context.Context) error { return converged(ctx, s.admin, s.ns, operators...) })

	s.proxy.Partition()
	cut := time.Now()
	writes := s.created.total()
	// What users do meanwhile, through an API server the operators cannot reach: new
	// objects, new sizes, deletions.
	for _, op := range operators {
		op.create(t, s.admin, s.ns, op.name+"-during", size.objects)
		op.resizeNamed(t, s.admin, s.ns, op.name+"-before-0")
		deleteNamed(t, s.admin, s.ns, op, op.name+"-before-1")
	}
	time.Sleep(time.Until(cut.Add(partition)))
	if n := s.created.total() - writes; n != 0 {
		t.Fatalf("the partition let %d creates through", n)
	}
	s.proxy.Heal()
	healed := time.Now()

	await(t, size.limit, func(ctx context.Context) error { return converged(ctx, s.admin, s.ns, operators...) })
	await(t, size.limit, func(ctx context.Context) error { return gone(ctx, s.admin, s.ns, "before-1") })
	converging := time.Since(healed)
	pods, recreated := s.created.checkDeleted(t, named("memcached-before-1", "podset-before-1", "at-before-1"))
	t.Logf("unreachable for %v with %d new objects of each kind; all converged %v after, %d At pods created, %d children created again for an owner deleted meanwhile; %d connections opened, %d watches (%d broken, %d expired), %d requests tried",
		partition.Round(time.Second), size.objects, converging.Round(100*time.Millisecond), pods, recreated,
		s.proxy.Connections(), s.watches.opened.Load(), s.watches.broken.Load(), s.watches.expired.Load(), s.tried.Reads()+s.tried.Writes())
}

func TestOperatorsConvergeThroughASlowAPIServer(t *testing.T) {
	size := sized()
	const latency = 500 * time.Millisecond
	s := startBehindProxy(t)
	s.proxy.SetLatency(latency)
	begin := time.Now()
	for _, op := range operators {
		op.create(t, s.admin, s.ns, op.name, size.objects)
	}
	await(t, size.limit, func(ctx context.Context) error { return converged(ctx, s.admin, s.ns, operators...) })
	pods := s.created.check(t)
	t.Logf("%v added to every request: %d objects of each kind converged in %v with %d reads and %d writes, %d At pods created",
		latency, size.objects, time.Since(begin).Round(100*time.Millisecond), s.tried.Reads(), s.tried.Writes(), pods)
}

func TestWatchesCutMidStreamResumeAndMissNothing(t *testing.T) {
	size := sized()
	s := startBehindProxy(t)
	// Every ten seconds or so, long enough for the first events of a hundred objects to
	// get through, short enough that every watch is cut again and again.
	s.proxy.CutEvery(10 * time.Second)
	for _, op := range operators {
		op.create(t, s.admin, s.ns, op.name, size.objects)
	}
	// A second round of changes, after the first has broken the watches a few times.
	await(t, size.limit, func(context.Context) error {
		if n := s.proxy.Cuts(); n < 3 {
			return fmt.Errorf("%d connections cut", n)
		}
		return nil
	})
	for _, op := range operators {
		for i := range size.objects / 2 {
			op.resizeNamed(t, s.admin, s.ns, fmt.Sprintf("%s-%d", op.name, i))
		}
	}
	await(t, size.limit, func(ctx context.Context) error { return converged(ctx, s.admin, s.ns, operators...) })
	pods := s.created.check(t)
	if s.watches.broken.Load() == 0 {
		t.Errorf("no watch stream broke in %d cuts: the scenario tried nothing", s.proxy.Cuts())
	}
	t.Logf("%d connections cut out of %d; %d watches opened, %d broken mid-stream; %d objects of each kind converged, %d At pods created",
		s.proxy.Cuts(), s.proxy.Connections(), s.watches.opened.Load(), s.watches.broken.Load(), size.objects, pods)
}

// deleteNamed deletes the named object of op's kind in ns.
func deleteNamed(t *testing.T, c client.Client, ns string, op *operator, name string) {
	t.Helper()
	obj := op.empty()
	obj.SetNamespace(ns)
	obj.SetName(name)
	if err := c.Delete(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// gone returns nil once nothing named after suffix is left in ns: the objects of each
// kind called "<kind>-<suffix>", their Deployments and their pods.
func gone(ctx context.Context, c client.Client, ns, suffix string) error {
	for _, op := range operators {
		name := op.name + "-" + suffix
		for _, obj := range []client.Object{op.empty(), &appsv1.Deployment{}, &corev1.Pod{}} {
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T %s is still there (%v)", obj, name, err)
			}
		}
	}
	return nil
}

// total returns how many objects the API server created.
func (l *ledger) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.created {
		n += c
	}
	return n
}

// checkDeleted is check for a scenario that deletes objects while the operators may not
// have seen it yet: a child created again for an owner already deleted is not a failure
// but a finding, counted and returned, as long as the scenario proves the garbage
// collector removed it. An operator whose cache still holds the owner, or whose reconcile
// read it just before the deletion, cannot tell (docs/reliability.md). deleted says
// whether an owner of that name was deleted.
func (l *ledger) checkDeleted(t *testing.T, deleted func(name string) bool) (pods, recreated int) {
	t.Helper()
	l.mu.Lock()
	for key, n := range l.created {
		if _, name, _ := strings.Cut(key, "/"); n > 1 && deleted(name) {
			recreated += n - 1
			l.created[key] = 1
		}
	}
	l.mu.Unlock()
	return l.check(t), recreated
}

// named returns whether a name is one of names.
func named(names ...string) func(string) bool {
	return func(name string) bool { return slices.Contains(names, name) }
}
