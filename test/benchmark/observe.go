package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An observer knows when every object has converged: its child done and its status
// saying so. It watches; it never polls, which on a busy API server would cost as much as
// the work it measures.
type observer struct {
	kind *kind
	bare bool // no objects: only the children count
	// kstatus says an object's status must also read Current to kstatus to be done.
	kstatus bool
	want    int

	mu        sync.Mutex
	objects   map[string]bool // by object name: the status says done
	children  map[string]bool // by owner name (own name when unowned): the child is done
	converged int
	// convergedAt is when each object first converged, by object name.
	convergedAt map[string]time.Time
	at          time.Time     // when the last object converged
	done        chan struct{} // closed then
	stop        context.CancelFunc
}

// observe starts watching namespace for k's objects and children and returns once its
// cache has synced. want objects must converge; bare says the children have no owners;
// withKstatus that an object is done only once kstatus reads it Current too.
func observe(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, namespace string, k *kind, bare, withKstatus bool, want int) (*observer, error) {
	ctx, stop := context.WithCancel(ctx)
	o := newObserver(k, bare, want)
	o.stop, o.kstatus = stop, withKstatus
	c, err := cache.New(cfg, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		stop()
		return nil, err
	}
	watch := func(prototype client.Object, seen func(client.Object)) error {
		informer, err := c.GetInformer(ctx, prototype)
		if err != nil {
			return err
		}
		_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { seen(obj.(client.Object)) },
			UpdateFunc: func(_, obj any) { seen(obj.(client.Object)) },
		})
		return err
	}
	if err := watch(k.child, o.child); err != nil {
		stop()
		return nil, err
	}
	if !bare {
		if err := watch(k.object("", ""), o.object); err != nil {
			stop()
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		stop()
		return nil, fmt.Errorf("the observer's cache did not sync")
	}
	return o, nil
}

// newObserver returns an observer of no object yet, watching nothing.
func newObserver(k *kind, bare bool, want int) *observer {
	return &observer{kind: k, bare: bare, want: want, objects: map[string]bool{}, children: map[string]bool{}, convergedAt: map[string]time.Time{}, done: make(chan struct{}), stop: func() {}}
}

// object records whether obj's status says it is done, and kstatus reads it Current: an
// implementation whose status says done while kstatus reads it in progress (an operator
// that writes its conditions and its observedGeneration apart, say) has not converged for
// the clients that read kstatus.
func (o *observer) object(obj client.Object) {
	done := o.kind.statusDone(obj) && (!o.kstatus || kstatusCurrent(obj))
	o.mu.Lock()
	defer o.mu.Unlock()
	o.set(o.objects, obj.GetName(), done)
}

// kstatusCurrent says kstatus reads obj as Current.
func kstatusCurrent(obj client.Object) bool {
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false
	}
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: data})
	return err == nil && res.Status == kstatus.CurrentStatus
}

func (o *observer) child(obj client.Object) {
	owner := obj.GetName()
	if ref := metav1.GetControllerOf(obj); ref != nil {
		owner = ref.Name
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.set(o.children, owner, o.kind.childDone(obj))
}

// set records one side of an object's state and keeps the count of converged objects.
func (o *observer) set(side map[string]bool, name string, done bool) {
	before := o.isConverged(name)
	side[name] = done
	switch after := o.isConverged(name); {
	case after && !before:
		o.converged++
		if _, ok := o.convergedAt[name]; !ok {
			o.convergedAt[name] = time.Now()
		}
	case before && !after:
		o.converged--
	}
	if o.converged == o.want && o.at.IsZero() {
		o.at = time.Now()
		close(o.done)
	}
}

func (o *observer) isConverged(name string) bool {
	return o.children[name] && (o.bare || o.objects[name])
}

// wait returns when every object converged, or an error when timeout passes or ctx ends
// first.
func (o *observer) wait(ctx context.Context, timeout time.Duration) (time.Time, error) {
	select {
	case <-o.done:
		return o.at, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(timeout):
		o.mu.Lock()
		defer o.mu.Unlock()
		return time.Time{}, fmt.Errorf("%d of %d objects converged in %v", o.converged, o.want, timeout)
	}
}

// progress counts the children done, the statuses that say so, and the objects converged.
func (o *observer) progress() (children, statuses, converged int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, done := range o.children {
		if done {
			children++
		}
	}
	for _, done := range o.objects {
		if done {
			statuses++
		}
	}
	return children, statuses, o.converged
}

// childrenSeen counts the children the observer has seen, done or not.
func (o *observer) childrenSeen() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.children)
}

// latencies returns, for each object created at created[name], how long it took from its
// creation until it first converged, in no particular order; an object that never converged
// is left out.
func (o *observer) latencies(created map[string]time.Time) []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]time.Duration, 0, len(created))
	for name, at := range created {
		if done, ok := o.convergedAt[name]; ok {
			out = append(out, done.Sub(at))
		}
	}
	return out
}

// close stops the observer's watches.
func (o *observer) close() { o.stop() }
