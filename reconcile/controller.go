package reconcile

import (
	"context"

	"errors"
	"fmt"
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/reconcilekit/reconcilekit/internal/gotype"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// Controller declares a controller: the kind it reconciles, its logic, and, through its
// options, the kinds it owns and references, what the manager caches of them, its field
// owner, finalizer and concurrency. It is the one source of the controller's wiring:
// Manager derives from it the watches (the shell's own writes dropped, children's bursts
// coalesced onto their owner), the indexes, registered once the manager runs, the cache's
// restrictions and transform, and package sharding the children that follow their owner's
// shard. Build it with For. A Controller is a value: one declaration serves any number of
// managers, each with state of its own.
//
// The settings whose functions take the reconciled type are methods (WithFinalizer,
// WithSuspend, WithReferences, WithDefaulter, WithValidator, WithConversion), so that one
// written for another type is a compile error, not a refusal at start-up. Each returns a
// copy of the declaration.
type Controller[T client.Object] struct {
	object     T
	logic      Logic[T]
	fieldOwner string
	opts       []Option
	typed      typed[T]
}

// typed is what the methods of Controller set: the settings whose functions take T.
type typed[T client.Object] struct {
	finalizer  string
	cleanup    Logic[T] // WithFinalizer
	suspended  func(T) bool
	references []reference[T]
	defaulter  webhook.Defaulter[T]
	validator  webhook.Validator[T]
	spokes     []conversion.SpokeConverter[T]
	converts   bool // WithConversion, even of no spoke
}

// For declares the controller of obj's kind (obj is an empty object of it, such as
// &v1alpha1.Memcached{}), which runs logic and writes as fieldOwner: the field manager of
// every write of the controller, the shell's and those of the Writer it gives the logic,
// so that a conflict message names the operator, and the source of its events. Options
// given later win over earlier ones, so that a program can add its own to an example's
// declaration.
//
// A declaration that cannot run (an empty fieldOwner, among others) is refused by
// Manager.New with a message that names the fix.
func For[T client.Object](obj T, logic Logic[T], fieldOwner string, opts ...Option) *Controller[T] {
	return &Controller[T]{object: obj, logic: logic, fieldOwner: fieldOwner, opts: opts}
}

// With returns a copy of the declaration with more options, which win over its own: how a
// program adds its own to an example's declaration.
func (c *Controller[T]) With(opts ...Option) *Controller[T] {
	d := c.clone()
	d.opts = append(d.opts, opts...)
	return d
}

// clone returns a copy of the declaration that shares nothing it could append to.
func (c *Controller[T]) clone() *Controller[T] {
	d := *c
	d.opts = slices.Clip(c.opts)
	d.typed.references = slices.Clip(c.typed.references)
	return &d
}

// WithFinalizer makes the shell add finalizer to every object before the logic first runs,
// and, once the object is being deleted, run cleanup until it returns a done outcome, then
// remove the finalizer so the deletion completes. The logic is not run for an object being
// deleted. A cleanup never holds a deletion silently: past its deadline
// (WithCleanupDeadline) the object is Stalled, SkipCleanupAnnotation lets a person end it,
// and a cleanup refused because its namespace is being deleted lets the deletion go on
// (see finalizer.go's reasons).
func (c *Controller[T]) WithFinalizer(finalizer string, cleanup func(ctx context.Context, obj T, s Scope) requeue.Outcome) *Controller[T] {
	d := c.clone()
	d.typed.finalizer, d.typed.cleanup = finalizer, LogicFunc[T](cleanup)
	return d
}

// WithSuspend makes suspended a second trigger of the pause, beside PausedAnnotation: while
// it reports true of an object (of its spec.suspend, say, Flux's convention), the shell runs
// no logic for it and says so in Paused, with reason ReasonSuspended. One mechanism, two
// triggers: the condition is written once on entry, then nothing (status, children, events)
// whatever is edited; deletion goes on; the logic runs again as soon as neither trigger
// holds.
func (c *Controller[T]) WithSuspend(suspended func(obj T) bool) *Controller[T] {
	d := c.clone()
	d.typed.suspended = suspended
	return d
}

// WithReferences declares a kind the reconciled objects reference by name without owning
// it, such as a ConfigMap named in their spec: names returns the names one object
// references, in its own namespace. An event of an object of that kind (created, changed,
// deleted) reconciles exactly the objects that name it, found through an index that the
// manager registers once it runs.
func (c *Controller[T]) WithReferences(kind client.Object, names func(obj T) []string) *Controller[T] {
	d := c.clone()
	d.typed.references = append(d.typed.references, reference[T]{kind: kind, names: names})
	return d
}

// Object returns an empty object of the reconciled kind.
func (c *Controller[T]) Object() client.Object { return newLike(c.object) }

// Children returns an empty object of each kind the controller owns (WithChildren).
func (c *Controller[T]) Children() []client.Object {
	o := c.options()
	out := make([]client.Object, 0, len(o.wiring.children))
	for _, child := range o.wiring.children {
		out = append(out, newLike(child))
	}
	return out
}

// Reconciler returns the controller's shell on its own, without a manager: for tests and
// programs that call Reconcile themselves. c reads and writes (the cache's reads become the
// API server's); opts are added to the declaration's. A declaration that cannot run gives a
// reconciler that fails every reconcile with a terminal error saying why.
func (c *Controller[T]) Reconciler(cl client.Client, opts ...Option) rtreconcile.Reconciler {
	s, err := c.With(opts...).shell(cl, cl)
	if err == nil {
		err = register(s.metrics)
	}
	s.invalid = err
	return s
}

// options returns the declaration's options, applied over the defaults.
func (c *Controller[T]) options() options {
	o := options{clock: clock.RealClock{}, fieldOwner: c.fieldOwner,
		memory:  memoryOptions{expectationTimeout: DefaultExpectationTimeout, progressInterval: DefaultProgressInterval},
		cleanup: cleanupOptions{finalizer: c.typed.finalizer, cleanupDeadline: DefaultCleanupDeadline},
		retry:   retryOptions{reportAfter: DefaultReportAfter}}
	for _, opt := range c.opts {
		opt(&o)
	}
	for _, r := range c.typed.references {
		o.wiring.referenced = append(o.wiring.referenced, r.kind)
	}
	return o
}

// kind names the reconciled kind in messages.
func (c *Controller[T]) kind() string { return reflect.TypeOf(c.object).Elem().Name() }

// shell returns the controller's shell with state of its own, reading and writing through
// cl and reading uncached through apiReader; and an error when the declaration cannot run.
func (c *Controller[T]) shell(cl client.Client, apiReader client.Reader) (*shell[T], error) {
	s := &shell[T]{client: cl, apiReader: apiReader, logic: c.logic, options: c.options(), memory: newMemory(), children: newChildren(),
		bereaved: newOwnerSet(), failures: newFailures(), fights: newFights(),
		cleanup: c.typed.cleanup, suspended: c.typed.suspended}
	s.newObject = func() T { return newLike(c.object) }
	var errs []error
	if s.options.fieldOwner == "" {
		errs = append(errs, fmt.Errorf("no field owner: name the operator in the declaration, reconcile.For(&%s{}, logic, \"<operator name>\", ...)", goName(c.object)))
	}
	if s.options.cleanup.finalizer != "" && s.cleanup == nil {
		errs = append(errs, fmt.Errorf("WithFinalizer(%q, nil): give it the cleanup to run before the finalizer is removed", s.options.cleanup.finalizer))
	}
	if _, ok := any(c.object).(RequestStatus); s.options.requestAnnotation != "" && !ok {
		errs = append(errs, fmt.Errorf("WithReconcileRequests needs a status that records the request handled: give %s the methods of reconcile.RequestStatus, over a status field lastHandledReconcileAt", goName(c.object)))
	}
	var scheme *runtime.Scheme
	if cl != nil {
		scheme = cl.Scheme()
	}
	s.ownedBy = childLabelOf(c.object, scheme)
	var undeclarable []error
	s.declared, undeclarable = declare(s.options.wiring.children, scheme)
	errs = append(errs, undeclarable...)
	for _, ref := range c.typed.references {
		if ref.names == nil {
			errs = append(errs, fmt.Errorf("WithReferences(&%s{}, nil): give it the function that reads the names an object references", goName(ref.kind)))
		}
	}
	errs = append(errs, checkOptional(&s.options, c.object, scheme)...)
	errs = append(errs, checkStatusIgnored(&s.options)...)
	s.metrics = newObserver(cl, c.object, &s.options)
	s.client = observedClient{Client: cl, m: s.metrics} // counts the shell's writes
	if s.options.tracer != nil {
		s.client = tracedClient{Client: s.client, tracer: s.options.tracer}
	}
	s.kind = c.kind()
	if err := errors.Join(errs...); err != nil {
		return s, fmt.Errorf("reconcile: the %s controller: %w", c.kind(), err)
	}
	return s, nil
}

// cacheRules returns what the declaration says of the manager's cache.
func (c *Controller[T]) cacheRules() []cacheRule { return c.options().wiring.caches }

// kinds returns every kind the controller watches, its own first.
func (c *Controller[T]) kinds() []client.Object {
	o := c.options()
	kinds := append([]client.Object{c.object}, o.wiring.children...)
	kinds = append(kinds, o.wiring.referenced...)
	for _, w := range o.wiring.watches {
		kinds = append(kinds, w.kind)
	}
	return kinds
}

// Optional returns an empty object of each kind declared optional (WithOptional): kinds
// whose CRD may be absent, which whatever else watches the controller's kinds, such as a
// shard's assigner, must wait for too.
func (c *Controller[T]) Optional() []client.Object {
	o := c.options()
	out := make([]client.Object, 0, len(o.wiring.optional))
	for _, kind := range o.wiring.optional {
		out = append(out, newLike(kind))
	}
	return out
}

// setup adds the controller to mgr, its shell behind gate, its optional kinds behind crds.
func (c *Controller[T]) setup(mgr manager.Manager, gate Gate, crds *crdGate, metrics bool) error {
	s, err := c.shell(mgr.GetClient(), mgr.GetAPIReader())
	if err != nil {
		return err
	}
	if err := checkScopes(mgr.GetRESTMapper(), mgr.GetScheme(), c.object, s.options.wiring.children, s.options.wiring.optional); err != nil {
		return fmt.Errorf("reconcile: the %s controller: %w", c.kind(), err)
	}
	if metrics {
		s.metrics.source = cached{mgr.GetCache(), c.object, s.metrics.source}
		if err := register(s.metrics); err != nil {
			return err
		}
	}
	s.gate, s.crds = gate, crds
	if s.options.recorder == nil {
		s.options.recorder = mgr.GetEventRecorder(s.options.fieldOwner)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(c.object, builder.WithPredicates(s.ignoreOwnWrites())).
		WithOptions(controller.Options{MaxConcurrentReconciles: s.options.concurrency, RateLimiter: s.options.observed(s.kind)})
	// watch adds the watch of a kind: through crds, started and stopped with its CRD, when
	// the kind is optional.
	var gated error
	watch := func(kind client.Object, h handler.EventHandler) {
		if !slices.ContainsFunc(s.options.wiring.optional, sameKind(kind)) {
			b = b.Watches(kind, h)
			return
		}
		src, err := crds.source(kind, c.object, h)
		if err != nil {
			gated = errors.Join(gated, err)
			return
		}
		b = b.WatchesRawSource(src)
	}
	for _, child := range s.options.wiring.children {
		watch(child, s.enqueueOwner(mgr, c.object, child))
	}
	referrers := newList(mgr.GetScheme(), c.object)
	for _, ref := range c.typed.references {
		if referrers == nil {
			return fmt.Errorf("reconcile: the %s controller: the scheme has no %sList to find referrers with", c.kind(), c.kind())
		}
		names := ref.names
		field := ref.field()
		watch(ref.kind, enqueueReferrers(mgr.GetClient(), referrers, field, names))
		// Registered once the manager runs: registered before, the index would make the
		// manager wait for the referrers' cache with no limit, so that an operator refused
		// the list would neither start nor stop (controller-runtime#3440). Until then the
		// handler finds the referrers without it.
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			return indexReferences(ctx, mgr.GetFieldIndexer(), c.object, field, names)
		})); err != nil {
			return err
		}
	}
	for _, w := range s.options.wiring.watches {
		watch(w.kind, coalesce(w.handler, coalesceDelay))
	}
	if s.readsPods() {
		// readiness.Pods' index is registered once the manager runs: it then joins the pod
		// informer the controller's watch starts, whose cache sync the controller bounds, so
		// an operator that may not list pods fails to start with an error. Registered before
		// the manager starts, it would make the manager wait for the pod cache with no limit.
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			return readiness.IndexPods(ctx, mgr.GetFieldIndexer())
		})); err != nil {
			return err
		}
	}
	if gated != nil {
		return fmt.Errorf("reconcile: the %s controller: %w", c.kind(), gated)
	}
	if err := c.addMigration(mgr); err != nil {
		return err
	}
	return b.Complete(s)
}

// WithChildren declares the kinds of the objects the controller creates and controls, each
// as an empty object (&appsv1.Deployment{}). For each, the manager watches the kind and a
// child's events reconcile its controlling owner, a burst of them (a rollout) coalesced into
// one reconcile, while a change of the child's readiness goes through at once
// (readiness.Changed). A child's deletion makes the shell read its owner fresh
// before the logic runs, so that the children of an owner being deleted are not created
// again. The Writer of the Scope writes these kinds and refuses any other, and every kind
// when a declaration has no WithChildren, which stalls the reconcile with a message naming
// the WithChildren line to declare. Package sharding moves these children with their owner.
func WithChildren(kinds ...client.Object) Option {
	return func(o *options) { o.wiring.children = append(o.wiring.children, kinds...) }
}

// WithCache restricts what the manager caches of a kind the controller reads, such as the
// pods or ConfigMaps of its own by a label selector, rather than every one of the cluster.
// Two controllers of one manager that restrict one kind differently are refused.
func WithCache(kind client.Object, by cache.ByObject) Option {
	return func(o *options) { o.wiring.caches = append(o.wiring.caches, cacheRule{kind: kind, by: by}) }
}

// WithWatch declares a kind the controller follows that it neither owns nor references by
// name, such as the pods of a Deployment it owns: h maps an event to the objects to
// reconcile, coalesced as a child's events are. A controller that owns Deployments and
// watches pods reads them through an index by Deployment (readiness.Pods), registered once
// the manager runs.
func WithWatch(kind client.Object, h handler.EventHandler) Option {
	return func(o *options) { o.wiring.watches = append(o.wiring.watches, watch{kind: kind, handler: h}) }
}

type reference[T client.Object] struct {
	kind  client.Object
	names func(T) []string
}

// field names the index of the referrers by the names of the kind they reference.
func (r reference[T]) field() string {
	return "reconcilekit.io/references-" + reflect.TypeOf(r.kind).Elem().String()
}

// wiring is what a declaration says of its watches and cache, which Manager derives the
// controller's wiring from.
type wiring struct {
	children      []client.Object // WithChildren
	referenced    []client.Object // WithReferences' kinds
	caches        []cacheRule     // WithCache
	watches       []watch         // WithWatch
	optional      []client.Object // WithOptional (optional.go)
	ignoredStatus []client.Object // WithStatusIgnored (statusignored.go)
}

type cacheRule struct {
	kind client.Object
	by   cache.ByObject
	all  bool // WithCacheAll: by is empty, and Setup accepts it
}

type watch struct {
	kind    client.Object
	handler handler.EventHandler
}

// goName names obj's Go type as a declaration spells it, with the conventional import name
// of its package, such as corev1.ConfigMap, for a message that names a fix.
func goName(obj any) string { return gotype.Name(obj, nil) }

// newLike returns a new, empty object of obj's type.
func newLike[T client.Object](obj T) T {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}

// readsPods reports whether the controller owns Deployments or StatefulSets and watches
// pods: it reads their pods (readiness.Pods, readiness.StatefulSetPods), which an index by
// workload makes cheap.
func (r *shell[T]) readsPods() bool {
	workloads := slices.ContainsFunc(r.options.wiring.children, func(o client.Object) bool {
		switch o.(type) {
		case *appsv1.Deployment, *appsv1.StatefulSet:
			return true
		}
		return false
	})
	pods := slices.ContainsFunc(r.options.wiring.watches, func(w watch) bool { _, ok := w.kind.(*corev1.Pod); return ok })
	return workloads && pods
}
