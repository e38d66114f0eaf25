package main

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// An idealSpec is the least API work a status-reporting operator of a kind can do: on an
// object's creation, create its children and write its status once to say they are on
// their way; once its child is done, write its status once more to say so. Nothing is read
// from the API server, nothing is written twice, no write is guarded by a resourceVersion.
// The full-status pipeline writes, each once, what the library-built operator must: its
// status, and its finalizer if it holds deletions.
type idealSpec struct {
	// children are what obj needs created, without their owner: the pipeline sets it.
	children func(obj client.Object) []client.Object
	// progressing sets obj's status to say its children are on their way: the least status
	// that says so, or with full the status the library-built operator writes.
	progressing func(obj client.Object, full bool)
	// ready sets obj's status to say its child is done (the least or the full status), from
	// what the pipeline's cache holds, or returns false when the cache does not yet hold all
	// it needs.
	ready func(ctx context.Context, c client.Reader, obj client.Object, full bool) bool
	// watches are other types, labelled with their object's name under instanceLabel,
	// whose events may complete what ready needs (a PodSet's pods).
	watches []client.Object
	// index, if set, registers the indexes ready reads in the pipeline's cache.
	index func(ctx context.Context, c cache.Cache) error
	// finalizer, if set, is the finalizer the library-built operator holds its objects
	// with until it has cleaned up after them. The full-status pipeline adds it, in one
	// patch before the children, as any operator that must clean up has to: a status
	// write cannot carry it.
	finalizer string
}

// finalizerOf is the finalizer the pipeline adds: the kind's, by the full-status pipeline
// alone.
func (s idealSpec) finalizerOf(full bool) string {
	if !full {
		return ""
	}
	return s.finalizer
}

// instanceLabel names, on the pods of a PodSet, the PodSet they belong to.
const instanceLabel = "app.kubernetes.io/instance"

// idealWorkers is how many objects the ideal pipeline works on at a time, as many as the
// library-built operators reconcile.
const idealWorkers = 16

// An idealPipeline runs one kind's idealSpec from watches: no work queue, no reconcile,
// no retry. Each object's work goes to one worker, always the same, so that its two status
// writes keep their order without a lock.
type idealPipeline struct {
	kind   *kind
	full   bool // writes the operator's full status, not the least
	writer client.Client
	cache  cache.Cache
	seed   maphash.Seed
	work   [idealWorkers]chan idealTask

	mu     sync.Mutex
	state  map[string]idealState
	errs   []error
	failed func(error)
}

type idealState uint8

const (
	created     idealState = iota // seen, nothing written yet
	progressing                   // children created and the first status written
	ready                         // the second status written: nothing more to do
)

// An idealTask is an object to start (created) or to check for readiness.
type idealTask struct {
	obj   client.Object // the object as the watch delivered it, to start
	name  string        // the object's name, to check
	start bool
}

// startIdeal starts the ideal pipeline of k on cfg, writing the least status or with full
// the library-built operator's, and returns once its watches have synced; stop ends it and
// returns the errors it met. The pipeline never retries, so it calls failed with its first
// error: the run cannot converge. With watching it also watches and caches every kind of
// child, as the library-built operator does to keep them as declared, and does nothing with
// their events: what those watches cost the control plane and the process, weighed apart
// from the reconciles they would wake.
func startIdeal(ctx context.Context, cfg *rest.Config, scheme *k8sruntime.Scheme, k *kind, full, watching bool, failed func(error)) (stop func() error, err error) {
	// The floor's clients ask for no compression, as the library's manager does.
	cfg = rest.CopyConfig(cfg)
	cfg.DisableCompression = true
	ctx, cancel := context.WithCancel(ctx)
	writer, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		cancel()
		return nil, err
	}
	opts := cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}, DefaultTransform: cache.TransformStripManagedFields()}
	c, err := cache.New(cfg, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	if k.ideal.index != nil {
		if err := k.ideal.index(ctx, c); err != nil {
			cancel()
			return nil, err
		}
	}
	p := &idealPipeline{kind: k, full: full, writer: writer, cache: c, seed: maphash.MakeSeed(), state: map[string]idealState{}, failed: failed}
	var wg sync.WaitGroup
	for i := range p.work {
		p.work[i] = make(chan idealTask, 4096)
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case t := <-p.work[i]:
					p.do(ctx, t)
				}
			}
		})
	}
	handle := func(prototype client.Object, event func(client.Object)) error {
		informer, err := c.GetInformer(ctx, prototype)
		if err != nil {
			return err
		}
		_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { event(obj.(client.Object)) },
			UpdateFunc: func(_, obj any) { event(obj.(client.Object)) },
		})
		return err
	}
	check := func(obj client.Object) {
		if name := idealOwner(obj); name != "" {
			p.queue(ctx, idealTask{name: name})
		}
	}
	errs := []error{
		handle(k.object("", ""), func(obj client.Object) {
			// The informer's object is the cache's own: the pipeline writes into a copy.
			p.queue(ctx, idealTask{obj: obj.DeepCopyObject().(client.Object), name: obj.GetName(), start: true})
		}),
		handle(k.child, func(obj client.Object) {
			if k.childDone(obj) {
				check(obj)
			}
		}),
	}
	for _, w := range k.ideal.watches {
		errs = append(errs, handle(w, check))
	}
	if watching {
		for _, child := range k.ideal.children(k.object(namespace, "prototype")) {
			_, err := c.GetInformer(ctx, child)
			errs = append(errs, err)
		}
	}
	stop = func() error {
		cancel()
		wg.Wait()
		p.mu.Lock()
		defer p.mu.Unlock()
		return errors.Join(p.errs...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, stop())
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.Join(errors.New("the ideal pipeline's cache did not sync"), stop())
	}
	return stop, nil
}

// idealOwner is the name of the object a child or a labelled pod belongs to.
func idealOwner(obj client.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return ref.Name
	}
	return obj.GetLabels()[instanceLabel]
}

func (p *idealPipeline) queue(ctx context.Context, t idealTask) {
	select {
	case p.work[maphash.String(p.seed, t.name)%idealWorkers] <- t:
	case <-ctx.Done():
	}
}

func (p *idealPipeline) do(ctx context.Context, t idealTask) {
	p.mu.Lock()
	state, seen := p.state[t.name]
	if t.start && !seen {
		p.state[t.name] = created
	}
	p.mu.Unlock()
	switch {
	case t.start && !seen:
		p.fail(ctx, p.start(ctx, t.obj))
	case !t.start && state == progressing:
		p.fail(ctx, p.check(ctx, t.name))
	}
}

// start adds obj's finalizer (full status only), creates its children and writes its
// first status.
func (p *idealPipeline) start(ctx context.Context, obj client.Object) error {
	if f := p.kind.ideal.finalizerOf(p.full); f != "" {
		before := obj.DeepCopyObject().(client.Object)
		controllerutil.AddFinalizer(obj, f)
		if err := p.writer.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return err
		}
	}
	for _, child := range p.kind.ideal.children(obj) {
		if err := controllerutil.SetControllerReference(obj, child, p.writer.Scheme()); err != nil {
			return err
		}
		if err := p.writer.Create(ctx, child); err != nil {
			return err
		}
	}
	if err := p.writeStatus(ctx, obj, func(o client.Object) { p.kind.ideal.progressing(o, p.full) }); err != nil {
		return err
	}
	p.mu.Lock()
	p.state[obj.GetName()] = progressing
	p.mu.Unlock()
	// The child may have become done while the status was written.
	return p.check(ctx, obj.GetName())
}

// check writes the object's second status if its child is done.
func (p *idealPipeline) check(ctx context.Context, name string) error {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	child := p.kind.child.DeepCopyObject().(client.Object)
	if err := p.cache.Get(ctx, key, child); err != nil || !p.kind.childDone(child) {
		return client.IgnoreNotFound(err)
	}
	obj := p.kind.object(namespace, name)
	if err := p.cache.Get(ctx, key, obj); err != nil {
		return err
	}
	ok := false
	if err := p.writeStatus(ctx, obj, func(o client.Object) { ok = p.kind.ideal.ready(ctx, p.cache, o, p.full) }); err != nil || !ok {
		return err
	}
	p.mu.Lock()
	p.state[name] = ready
	p.mu.Unlock()
	return nil
}

// writeStatus patches obj's status as set changes it, unless set changes nothing.
func (p *idealPipeline) writeStatus(ctx context.Context, obj client.Object, set func(client.Object)) error {
	before := obj.DeepCopyObject().(client.Object)
	set(obj)
	patch := client.MergeFrom(before)
	data, err := patch.Data(obj)
	if err != nil || string(data) == "{}" {
		return err
	}
	return p.writer.Status().Patch(ctx, obj, client.RawPatch(patch.Type(), data))
}

// fail records err, unless the pipeline is stopping.
func (p *idealPipeline) fail(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		p.mu.Lock()
		p.errs = append(p.errs, err)
		p.mu.Unlock()
		p.failed(err)
	}
}
