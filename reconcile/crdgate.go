package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// This file is the shell's part "the CRD gate" (docs/architecture.md, the shell's parts):
// the manager's gate of the kinds declared optional (WithOptional, optional.go), and
// gatedClient, the layer of the Writer's client that refuses those kinds while their
// CRD is absent.

// waitingForCRD is 1 for each optional kind whose CRD is absent, 0 once it is established.
var waitingForCRD = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "reconcilekit_kinds_waiting_for_crd",
	Help: "1 for each kind declared optional (reconcile.WithOptional) whose CustomResourceDefinition is not established, 0 once it is, by kind.",
}, []string{"kind"})

// crdResource is the resource of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdGate is a manager's gate of its optional kinds, as crossplane-runtime's is: it
// watches CustomResourceDefinitions, and starts the watches of a kind once its CRD is
// established, stops them and removes the kind's informer once it is gone.
type crdGate struct {
	mgr     manager.Manager
	metrics bool

	updating sync.Mutex // one update at a time: a removal's RemoveInformer must not follow a later start

	gating atomic.Bool // any kind is optional: until then every request passes at once

	mu      sync.Mutex
	kinds   map[schema.GroupVersionKind]*gatedKind
	synced  bool          // the CRDs were listed: each kind's presence is known
	updated bool          // the first update after the list is done
	ready   chan struct{} // closed once synced

	informer toolscache.SharedIndexInformer // nil until the gate runs
}

// gatedKind is an optional kind and what the gate knows of it.
type gatedKind struct {
	gvk     schema.GroupVersionKind
	obj     client.Object
	present bool
	crd     string // the name of the CRD that served it last, "" if none was seen
	sources []*gatedSource

	// While present: a context that ends when the CRD goes, and the requests for the kind
	// under way, which it cancels. The informer is removed once they have returned: a read
	// that reached the cache after the removal would make an informer of a resource that
	// is gone, and wait on it for ever.
	epoch    context.Context
	end      context.CancelFunc
	inflight sync.WaitGroup
}

func newCRDGate(mgr manager.Manager, metrics bool) *crdGate {
	return &crdGate{mgr: mgr, metrics: metrics, kinds: map[schema.GroupVersionKind]*gatedKind{}, ready: make(chan struct{})}
}

// kind returns the gate's record of the optional kind obj, made on first use.
func (g *crdGate) kind(obj client.Object) (*gatedKind, error) {
	gvk, err := apiutil.GVKForObject(obj, g.mgr.GetScheme())
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	k, ok := g.kinds[gvk]
	if !ok {
		k = &gatedKind{gvk: gvk, obj: newLike(obj)}
		g.kinds[gvk] = k
		g.gating.Store(true)
	}
	return k, nil
}

// source returns the source of the watch of the optional kind obj for a controller of
// owner's kind: events of obj's kind go to h while its CRD is established.
func (g *crdGate) source(obj, owner client.Object, h handler.EventHandler) (source.Source, error) {
	k, err := g.kind(obj)
	if err != nil {
		return nil, err
	}
	if g.informer == nil {
		if err := g.start(); err != nil {
			return nil, err
		}
	}
	s := &gatedSource{gate: g, kind: k, handler: h, owners: newList(g.mgr.GetScheme(), owner)}
	g.mu.Lock()
	k.sources = append(k.sources, s)
	g.mu.Unlock()
	return s, nil
}

// start adds the gate to the manager, once it gates a kind.
func (g *crdGate) start() error {
	if g.metrics {
		if err := telemetry.Register(waitingForCRD); err != nil {
			return err
		}
	}
	dyn, err := dynamic.NewForConfigAndClient(g.mgr.GetConfig(), g.mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("reconcile: the watch of CustomResourceDefinitions: %w", err)
	}
	g.informer = dynamicinformer.NewFilteredDynamicInformer(dyn, crdResource, "", 0, toolscache.Indexers{}, nil).Informer()
	// A CRD's schema can weigh hundreds of KiB and a cluster can hold hundreds: the gate
	// keeps only what it reads.
	if err := g.informer.SetTransform(slimCRD); err != nil {
		return err
	}
	changed := func(any) { g.update() }
	if _, err := g.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(_, _ any) { g.update() }, DeleteFunc: changed,
	}); err != nil {
		return err
	}
	return g.mgr.Add(g)
}

// Start runs the watch of CustomResourceDefinitions until ctx ends.
func (g *crdGate) Start(ctx context.Context) error {
	go g.informer.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), g.informer.HasSynced) {
		return nil // stopping
	}
	g.mu.Lock()
	g.synced = true
	g.mu.Unlock()
	g.update()
	close(g.ready)
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: a replica standing by reports its readiness, which depends
// on which CRDs exist, too.
func (g *crdGate) NeedLeaderElection() bool { return false }

// update brings every gated kind in line with the CRDs: starts the watches of a kind whose
// CRD is now established, stops those of a kind whose CRD is gone, and reconciles the
// controllers' objects again when either happens.
func (g *crdGate) update() {
	g.updating.Lock()
	defer g.updating.Unlock()
	crds := g.informer.GetStore().List()
	g.mu.Lock()
	if !g.synced { // the first list is not complete: it would say present CRDs are absent
		g.mu.Unlock()
		return
	}
	var again []*gatedSource
	var removed []*gatedKind
	for _, k := range g.kinds {
		name, present := serving(crds, k.gvk)
		if name != "" {
			k.crd = name
		}
		if g.metrics {
			waitingForCRD.WithLabelValues(k.gvk.GroupKind().String()).Set(map[bool]float64{true: 0, false: 1}[present])
		}
		if present == k.present {
			continue
		}
		k.present = present
		if present {
			k.epoch, k.end = context.WithCancel(context.Background())
		} else if k.end != nil {
			k.end()
		}
		for _, s := range k.sources {
			if present {
				s.activate()
			} else {
				s.deactivate()
			}
			again = append(again, s)
		}
		if !present {
			removed = append(removed, k)
		}
	}
	if !g.updated { // the start: every object is reconciled when the controller starts
		g.updated, again = true, nil
	}
	g.mu.Unlock()
	ctx := context.Background()
	for _, k := range removed {
		// Its informer would list a resource that is gone, for ever; the gate starts
		// another when the CRD comes back. New requests for the kind are refused from now
		// on, and those under way cancelled: once they have returned, none can make it again.
		k.inflight.Wait()
		if err := g.mgr.GetCache().RemoveInformer(ctx, k.obj); err != nil {
			log.Log.Error(err, "removing the informer of a kind whose CRD is gone", "kind", k.gvk.String())
		}
	}
	for _, s := range again {
		s.reconcileAll(ctx)
	}
}

// enter admits a request for obj's kind: at once when the kind is not optional; with a
// context that ends when the CRD goes when it is optional and its CRD established, done to
// be called when the request has returned; and with an error, before anything is sent,
// when its CRD is absent.
func (g *crdGate) enter(ctx context.Context, obj runtime.Object) (_ context.Context, done func(), _ error) {
	if g == nil || obj == nil || !g.gating.Load() {
		return ctx, func() {}, nil
	}
	gvk, err := apiutil.GVKForObject(obj, g.mgr.GetScheme())
	if err != nil {
		return ctx, func() {}, nil // the request will say
	}
	if _, isList := obj.(meta.List); isList {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	g.mu.Lock()
	k, ok := g.kinds[gvk]
	switch {
	case !ok:
		g.mu.Unlock()
		return ctx, func() {}, nil
	case !k.present:
		err := &crdAbsentError{gvk: gvk, crd: k.crd}
		g.mu.Unlock()
		return ctx, func() {}, err
	}
	k.inflight.Add(1)
	epoch := k.epoch
	g.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(epoch, cancel)
	return ctx, func() { stop(); cancel(); k.inflight.Done() }, nil
}

// presence reports whether the gate knows if obj's kind is installed, and if so whether it is:
// for the readiness check.
func (g *crdGate) presence(obj client.Object) (present, known bool) {
	gvk, err := apiutil.GVKForObject(obj, g.mgr.GetScheme())
	if err != nil {
		return true, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	k, ok := g.kinds[gvk]
	if !ok {
		return true, true
	}
	return k.present, g.synced
}

// gated returns kinds with each optional one wrapped for the readiness check, which then
// counts it only while its CRD exists.
func (g *crdGate) gated(kinds []client.Object) []client.Object {
	out := make([]client.Object, len(kinds))
	for i, kind := range kinds {
		out[i] = kind
		if g.isGated(kind) {
			out[i] = optionalKind{Object: kind, presence: func() (bool, bool) { return g.presence(kind) }}
		}
	}
	return out
}

// isGated reports whether obj's kind is optional.
func (g *crdGate) isGated(obj client.Object) bool {
	gvk, err := apiutil.GVKForObject(obj, g.mgr.GetScheme())
	if err != nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.kinds[gvk]
	return ok
}

// optionalKind is a kind of the readiness check that counts only while its CRD exists.
type optionalKind struct {
	client.Object
	presence func() (present, known bool)
}

// serving returns the name of the CRD among crds that serves gvk, and whether it is
// established, serves gvk's version and is not being deleted.
func serving(crds []any, gvk schema.GroupVersionKind) (string, bool) {
	for _, item := range crds {
		u, ok := item.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		if group != gvk.Group || kind != gvk.Kind {
			continue
		}
		if u.GetDeletionTimestamp() != nil {
			return u.GetName(), false
		}
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		served := slices.ContainsFunc(versions, func(v any) bool {
			m, _ := v.(map[string]any)
			return m["name"] == gvk.Version && m["served"] == true
		})
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		established := slices.ContainsFunc(conds, func(c any) bool {
			m, _ := c.(map[string]any)
			return m["type"] == "Established" && m["status"] == "True"
		})
		return u.GetName(), served && established
	}
	return "", false
}

// slimCRD keeps of a CRD what the gate reads: its name, group, kind, versions served, and
// conditions.
func slimCRD(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // a tombstone
	}
	slim := &unstructured.Unstructured{Object: map[string]any{}}
	slim.SetGroupVersionKind(u.GroupVersionKind())
	slim.SetName(u.GetName())
	slim.SetUID(u.GetUID())
	slim.SetResourceVersion(u.GetResourceVersion())
	slim.SetDeletionTimestamp(u.GetDeletionTimestamp())
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	var versions []any
	all, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range all {
		if m, ok := v.(map[string]any); ok {
			versions = append(versions, map[string]any{"name": m["name"], "served": m["served"]})
		}
	}
	var conds []any
	all, _, _ = unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range all {
		if m, ok := c.(map[string]any); ok {
			conds = append(conds, map[string]any{"type": m["type"], "status": m["status"]})
		}
	}
	slim.Object["spec"] = map[string]any{"group": group, "names": map[string]any{"kind": kind}, "versions": versions}
	slim.Object["status"] = map[string]any{"conditions": conds}
	return slim, nil
}

// gatedSource is the source of one controller's watch of an optional kind: the watch of the
// kind runs while its CRD is established, and is stopped when the CRD goes.
type gatedSource struct {
	gate    *crdGate
	kind    *gatedKind
	handler handler.EventHandler
	owners  client.ObjectList // a list of the controller's kind, to reconcile them all

	// Set once the controller starts the source, under the gate's lock.
	ctx    context.Context
	queue  workqueue.TypedRateLimitingInterface[rtreconcile.Request]
	active source.SyncingSource
	stop   context.CancelFunc
}

// Start is called by the controller when it starts: the watch starts now if the CRD is
// established, or when it becomes so.
func (s *gatedSource) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[rtreconcile.Request]) error {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	s.ctx, s.queue = ctx, queue
	if s.kind.present {
		s.activate()
	}
	return nil
}

// WaitForSync waits until the gate knows whether the kind is installed and, if it is, until
// its cache has synced, as for a kind that is not optional.
func (s *gatedSource) WaitForSync(ctx context.Context) error {
	select {
	case <-s.gate.ready:
	case <-ctx.Done():
		return fmt.Errorf("the CustomResourceDefinitions were not listed (the operator needs list and watch on customresourcedefinitions.apiextensions.k8s.io to know whether %s is installed): %w",
			s.kind.gvk.GroupKind(), ctx.Err())
	}
	s.gate.mu.Lock()
	active := s.active
	s.gate.mu.Unlock()
	if active == nil {
		return nil
	}
	return active.WaitForSync(ctx)
}

// String names the source in the controller's log.
func (s *gatedSource) String() string {
	return fmt.Sprintf("optional kind source: %s", s.kind.gvk)
}

// activate starts the watch of the kind; the gate's lock is held.
func (s *gatedSource) activate() {
	if s.queue == nil || s.active != nil {
		return // not started yet: Start activates it
	}
	ctx, stop := context.WithCancel(s.ctx)
	src := source.Kind(s.gate.mgr.GetCache(), s.kind.obj, s.handler)
	if err := src.Start(ctx, s.queue); err != nil {
		stop()
		log.FromContext(s.ctx).Error(err, "starting the watch of an optional kind", "kind", s.kind.gvk.String())
		return
	}
	s.active, s.stop = src, stop
}

// deactivate stops the watch of the kind; the gate's lock is held.
func (s *gatedSource) deactivate() {
	if s.stop != nil {
		s.stop()
	}
	s.active, s.stop = nil, nil
}

// reconcileAll queues every object of the controller's kind: those that wait for the CRD
// go on, and those whose children of the kind are gone say so.
func (s *gatedSource) reconcileAll(ctx context.Context) {
	s.gate.mu.Lock()
	queue := s.queue
	s.gate.mu.Unlock()
	if queue == nil || s.owners == nil {
		return // not started: every object is reconciled when it starts
	}
	list := s.owners.DeepCopyObject().(client.ObjectList)
	if err := s.gate.mgr.GetClient().List(ctx, list); err != nil {
		log.Log.Error(err, "listing the objects to reconcile after a CRD change", "kind", s.kind.gvk.String())
		return
	}
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			queue.Add(rtreconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
}

// crdAbsentError is the error of a read or write of an optional kind whose CRD is absent.
type crdAbsentError struct {
	gvk schema.GroupVersionKind
	crd string // the CRD's name if one was seen, "" otherwise
}

func (e *crdAbsentError) Error() string {
	name := e.crd
	if name == "" { // never seen: the name kubebuilder would give it
		plural, _ := meta.UnsafeGuessKindToResource(e.gvk)
		name = plural.Resource + "." + e.gvk.Group
	}
	return fmt.Sprintf("waiting for the CustomResourceDefinition %s: %s (%s) is declared optional and is not installed, or not established; reconciling resumes once it is",
		name, e.gvk.Kind, e.gvk.GroupVersion())
}

// waitForCRD is the outcome of a reconcile that needed an optional kind whose CRD is
// absent (err): done, its object Stalled with ReasonWaitingForCRD, since the gate
// reconciles it again once the CRD is established. An object without conditions has only
// the terminal error to say it.
func waitForCRD(obj client.Object, err error) requeue.Outcome {
	if _, ok := obj.(conditions.Setter); ok {
		return requeue.Done()
	}
	return requeue.Terminal(err)
}

// gatedClient returns the layer of the Writer's client (and of the shell's reads of
// children) over c that refuses, before anything is sent, a read or write of an optional
// kind whose CRD is absent, noting the first such refusal in waiting, when set. Every
// request that names an object goes through the gate: it is an interceptor client, which
// has every method of client.Client, so a method the gate does not list passes through
// untouched instead of being lost to an embedding that forgot it. Get and List matter
// most: the cache would make an informer of the kind that never syncs, and the read would
// wait for it.
func gatedClient(c client.Client, gate *crdGate, waiting *error) client.Client {
	// enter admits a request for obj's kind (crdGate.enter), noting for the shell a kind
	// whose CRD is absent.
	enter := func(ctx context.Context, obj runtime.Object) (context.Context, func(), error) {
		ctx, done, err := gate.enter(ctx, obj)
		if err != nil && waiting != nil && *waiting == nil {
			*waiting = err
		}
		return ctx, done, err
	}
	// through runs send once obj's kind is admitted.
	through := func(ctx context.Context, obj runtime.Object, send func(context.Context) error) error {
		ctx, done, err := enter(ctx, obj)
		if err != nil {
			return err
		}
		defer done()
		return send(ctx)
	}
	return interceptor.NewClient(withWatch(c), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return c.Get(ctx, key, obj, opts...) })
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return through(ctx, list, func(ctx context.Context) error { return c.List(ctx, list, opts...) })
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return through(ctx, appliedKind(obj), func(ctx context.Context) error { return c.Apply(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return c.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return c.DeleteAllOf(ctx, obj, opts...) })
		},
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceGetOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return c.SubResource(sub).Get(ctx, obj, subObj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return subResourceWriter(c, sub).Create(ctx, obj, subObj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return subResourceWriter(c, sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return through(ctx, obj, func(ctx context.Context) error { return subResourceWriter(c, sub).Patch(ctx, obj, patch, opts...) })
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			return through(ctx, appliedKind(obj), func(ctx context.Context) error { return subResourceWriter(c, sub).Apply(ctx, obj, opts...) })
		},
	})
}

// appliedKind returns an object of the kind an apply configuration applies, for the gate
// to admit: the configuration itself when it is an object (client.ApplyConfigurationFromUnstructured,
// which ownership's Ensure sends), an empty object of its kind when it names one (a typed
// configuration), and nil otherwise, which the gate lets through for the request to say.
func appliedKind(obj runtime.ApplyConfiguration) runtime.Object {
	if o, ok := obj.(runtime.Object); ok {
		return o
	}
	named, ok := obj.(interface {
		GetAPIVersion() *string
		GetKind() *string
	})
	if !ok || named.GetAPIVersion() == nil || named.GetKind() == nil {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(*named.GetAPIVersion())
	u.SetKind(*named.GetKind())
	return u
}
