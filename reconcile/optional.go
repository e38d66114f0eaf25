package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
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
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// WithOptional marks kinds the controller owns, references or watches (WithChildren,
// WithReferences, WithWatch) as optional: kinds served by a CustomResourceDefinition that
// may be installed after the operator starts, or removed while it runs, such as the
// ServiceMonitor of a Prometheus that is not always there. The operator starts without
// them and does not restart for them:
//
//   - the manager watches CustomResourceDefinitions, starts the kind's watch (and cache)
//     once its CRD is established and serves the declared version, and stops it, removing
//     the kind's informer from the cache, once the CRD is removed; each time it reconciles
//     the controller's objects again;
//   - while the CRD is absent, a reconcile whose logic reads or writes the kind through the
//     Scope's Writer (ownership.Ensure, EnsureSet, Delete, or s.Client) is refused that
//     read or write before anything is sent, and ends with the object Stalled, with reason
//     ReasonWaitingForCRD and a message naming the CRD (and one Warning event), whatever
//     the logic did with the error: not retried, since the CRD's arrival reconciles the
//     object again;
//   - reconcilekit_kinds_waiting_for_crd is 1 for the kind while its CRD is absent, 0 once
//     it is established;
//   - the readiness check counts the kind's cache only while its CRD exists;
//   - a restriction of the kind's cache (WithCache) is accepted while the CRD is absent,
//     the kind taken as namespaced until its CRD says (a cluster-scoped optional kind whose
//     cache is restricted must be installed when the operator starts).
//
// A shard (package sharding) follows the optional child kinds too, through Optional: its
// assigner watches a kind only while the API server serves it.
//
// The operator needs list and watch on customresourcedefinitions (apiextensions.k8s.io). A kind served by the API server itself (its group has no dot,
// such as ConfigMap or Deployment.apps), the reconciled kind itself, and a kind the
// declaration does not otherwise declare are refused, and so is a kind that one controller
// of a manager declares optional and another does not. A shell without a manager
// (Controller.Reconciler) treats every kind as installed.
func WithOptional(kinds ...client.Object) Option {
	return func(o *options) { o.optional = append(o.optional, kinds...) }
}

// ReasonWaitingForCRD is Stalled's reason while the logic needs a kind declared optional
// (WithOptional) whose CustomResourceDefinition is not installed or not established. The
// object is reconciled again once it is.
const ReasonWaitingForCRD = "WaitingForCRD"

// waitingForCRD is 1 for each optional kind whose CRD is absent, 0 once it is established.
var waitingForCRD = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "reconcilekit_kinds_waiting_for_crd",
	Help: "1 for each kind declared optional (reconcile.WithOptional) whose CustomResourceDefinition is not established, 0 once it is, by kind.",
}, []string{"kind"})

// crdResource is the resource of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// checkOptional refuses, in the shell of obj's controller, optional kinds that cannot be:
// built in, the reconciled kind, or not declared otherwise.
func checkOptional(o *options, obj client.Object, scheme *runtime.Scheme) []error {
	var errs []error
	declared := slices.Clone(o.children)
	declared = append(declared, o.referenced...)
	for _, w := range o.watches {
		declared = append(declared, w.kind)
	}
	for _, kind := range o.optional {
		name := goName(kind)
		switch {
		case reflect.TypeOf(kind) == reflect.TypeOf(obj):
			errs = append(errs, fmt.Errorf("WithOptional(&%s{}) names the reconciled kind: a controller cannot run without its own kind; make the operator's start depend on its CRD instead", name))
			continue
		case !slices.ContainsFunc(declared, sameKind(kind)):
			errs = append(errs, fmt.Errorf("WithOptional(&%s{}) names a kind the controller does not declare: declare it with WithChildren, WithReferences or WithWatch too", name))
			continue
		}
		if scheme == nil {
			continue
		}
		if gvk, err := apiutil.GVKForObject(kind, scheme); err == nil && !strings.Contains(gvk.Group, ".") {
			errs = append(errs, fmt.Errorf("WithOptional(&%s{}): %s is served by the API server itself, never by a CustomResourceDefinition; remove it from WithOptional", name, gvk.GroupKind()))
		}
	}
	return errs
}

// optionalAgree refuses a kind one controller of a manager declares optional and another
// declares required: the kind has one cache in a manager, which the CRD gate removes when
// the CRD goes.
func optionalAgree(ds []Declaration) error {
	optional := map[reflect.Type]string{}
	for _, d := range ds {
		for _, kind := range d.Optional() {
			optional[reflect.TypeOf(kind)] = d.kind()
		}
	}
	var errs []error
	for _, d := range ds {
		mine := d.Optional()
		for _, kind := range d.kinds() {
			t := reflect.TypeOf(kind)
			by, ok := optional[t]
			if ok && !slices.ContainsFunc(mine, func(o client.Object) bool { return reflect.TypeOf(o) == t }) {
				errs = append(errs, fmt.Errorf("reconcile: %s is optional for the %s controller (WithOptional) and required by the %s controller: one manager has one cache of a kind, stopped when its CRD goes; declare it optional in both or in neither",
					t.Elem().Name(), by, d.kind()))
			}
		}
	}
	return errors.Join(errs...)
}

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
	if g == nil || !g.gating.Load() {
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

// enter admits a request for obj's kind (crdGate.enter), noting for the shell a kind whose
// CRD is absent.
func (c scopeClient) enter(ctx context.Context, obj runtime.Object) (context.Context, func(), error) {
	ctx, done, err := c.crds.enter(ctx, obj)
	if err != nil && c.waiting != nil && *c.waiting == nil {
		*c.waiting = err
	}
	return ctx, done, err
}

// Get refuses an optional kind whose CRD is absent: the cache would make an informer of it
// that never syncs, and the read would wait for it.
func (c scopeClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	ctx, done, err := c.enter(ctx, obj)
	if err != nil {
		return err
	}
	defer done()
	return c.Client.Get(ctx, key, obj, opts...)
}

// List refuses an optional kind whose CRD is absent.
func (c scopeClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ctx, done, err := c.enter(ctx, list)
	if err != nil {
		return err
	}
	defer done()
	return c.Client.List(ctx, list, opts...)
}

// Create refuses an optional kind whose CRD is absent, and notes a child written.
func (c scopeClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	ctx, done, err := c.enter(ctx, obj)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.note(obj, false)
	return nil
}

// Update refuses an optional kind whose CRD is absent, and notes a child written.
func (c scopeClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	ctx, done, err := c.enter(ctx, obj)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Client.Update(ctx, obj, opts...); err != nil {
		return err
	}
	c.note(obj, false)
	return nil
}

// Patch refuses an optional kind whose CRD is absent, and notes a child written.
func (c scopeClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	ctx, done, err := c.enter(ctx, obj)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	c.note(obj, false)
	return nil
}

// Delete refuses an optional kind whose CRD is absent, and notes a child written.
func (c scopeClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	ctx, done, err := c.enter(ctx, obj)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Client.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	c.note(obj, true)
	return nil
}

// DeleteAllOf refuses an optional kind whose CRD is absent.
func (c scopeClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	ctx, done, err := c.enter(ctx, obj)
	if err != nil {
		return err
	}
	defer done()
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

// optionalMapper returns provider's RESTMapper made to answer for the optional kinds of
// ds whose CRD is absent: namespaced, by the resource name kubebuilder would give them. The
// manager's cache asks, when it is made, whether each kind restricted by a ByObject entry
// (WithCache, a shard's label) is namespaced, and would refuse to be made for a kind not
// installed. While the CRD is absent nothing else asks for the kind (the gate keeps its
// watch stopped and the Writer refuses it); once it is installed the mapper answers from
// discovery. A cluster-scoped optional kind restricted by a ByObject entry must therefore
// be installed when the operator starts.
func optionalMapper(ds []Declaration, scheme *runtime.Scheme, provider func(*rest.Config, *http.Client) (meta.RESTMapper, error)) func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
	optional := map[schema.GroupKind]schema.GroupVersionKind{}
	for _, d := range ds {
		for _, kind := range d.Optional() {
			if gvk, err := apiutil.GVKForObject(kind, scheme); err == nil {
				optional[gvk.GroupKind()] = gvk
			}
		}
	}
	if len(optional) == 0 {
		return provider
	}
	if provider == nil {
		provider = apiutil.NewDynamicRESTMapper // as controller-runtime does
	}
	return func(cfg *rest.Config, c *http.Client) (meta.RESTMapper, error) {
		m, err := provider(cfg, c)
		if err != nil {
			return nil, err
		}
		return absentMapper{RESTMapper: m, optional: optional}, nil
	}
}

// absentMapper answers for optional kinds its RESTMapper does not know.
type absentMapper struct {
	meta.RESTMapper
	optional map[schema.GroupKind]schema.GroupVersionKind
}

// RESTMapping answers for an optional kind not installed: namespaced, by its guessed
// resource.
func (m absentMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	gvk, optional := m.optional[gk]
	if err == nil || !optional || !meta.IsNoMatchError(err) {
		return mapping, err
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return &meta.RESTMapping{Resource: plural, GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace}, nil
}
