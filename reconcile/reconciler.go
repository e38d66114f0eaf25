package reconcile

import (
	"context"
	"errors"
	"maps"
	"time"

	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/internal/writerpolicy"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/storage"
)

// conflictDelay is how long a quiet requeue waits: about as long as the cache takes to see
// the write that won.
const conflictDelay = 200 * time.Millisecond

// Logic is an operator's own reconcile logic for objects of type T. It brings the world in
// line with obj's spec, records what it saw in obj's status (the shell writes it), and says
// when to run again. s is what it needs for this reconcile: the time, and the Writer of
// obj's children.
type Logic[T client.Object] interface {
	Reconcile(ctx context.Context, obj T, s Scope) requeue.Outcome
}

// LogicFunc adapts a function to Logic.
type LogicFunc[T client.Object] func(ctx context.Context, obj T, s Scope) requeue.Outcome

// Reconcile calls f.
func (f LogicFunc[T]) Reconcile(ctx context.Context, obj T, s Scope) requeue.Outcome {
	return f(ctx, obj, s)
}

// Scope is what the shell gives the logic for one reconcile, explicitly: nothing the logic
// needs travels in its context.
type Scope struct {
	// Writer writes obj's children (ownership.Ensure, EnsureSet, Delete): through the
	// manager's client, which reads from its cache, as the controller's field owner,
	// recording drift and fights on obj, with the labels obj's shard gives its children,
	// and refusing a kind the declaration does not own (WithChildren).
	ownership.Writer

	// Now is the time the reconcile started by the controller's clock (WithClock): one now
	// for everything the logic decides. The shell stamps conditions with it too.
	Now time.Time

	// APIReader reads from the API server, uncached: for the rare read that must not be
	// stale, such as one that decides to create what must exist only once.
	APIReader client.Reader
}

// ObservedGenerationSetter is implemented by objects whose status has an observedGeneration.
// The shell sets it to the object's generation once the logic has handled that generation,
// with success or a terminal error, so readiness tools never take an old status for a new
// spec.
type ObservedGenerationSetter interface {
	SetObservedGeneration(int64)
}

// shell reconciles objects of type T, a pointer to a struct (for example
// *v1alpha1.Memcached): the reconciler a Controller's declaration makes for one manager,
// with that manager's state.
type shell[T client.Object] struct {
	client    client.Client
	apiReader client.Reader
	logic     Logic[T]
	options   options
	cleanup   Logic[T]
	newObject func() T
	metrics   *observer
	memory    *memory
	children  *children // read-your-own-writes of the logic's child writes
	warnings  warnings
	bereaved  *ownerSet  // owners whose child the cache saw deleted
	failures  *failures  // consecutive failed attempts, by object
	fights    fights     // of the children the logic writes (fights.go)
	ownedBy   childLabel // the label of every child the logic writes (ownedby.go)
	declared  declared   // the only kinds the logic writes (refusal.go)
	gate      Gate
	crds      *crdGate     // of the manager's optional kinds; nil without a manager
	kind      string       // the reconciled kind's name, for spans
	suspended func(T) bool // WithSuspend
	invalid   error        // a declaration that cannot run: every reconcile stalls with it
}

// Option configures a Controller: what its declaration derives (WithChildren,
// WithReferences, WithCache, WithWatch), and how its shell behaves.
type Option func(*options)

type options struct {
	fieldOwner  string               // For's: of every write, the shell's and the Writer's
	recorder    events.EventRecorder // WithRecorder; the manager's by default
	clock       clock.PassiveClock   // WithClock
	concurrency int                  // WithConcurrency

	wiring  wiring         // what the declaration derives: WithChildren, WithCache... (controller.go)
	cleanup cleanupOptions // WithFinalizer, WithCleanupDeadline (finalizer.go)
	retry   retryOptions   // WithBackoff, WithReportAfter (backoff.go)
	memory  memoryOptions  // WithExpectationTimeout, WithProgressInterval (memory.go)

	tracer            trace.Tracer      // WithTracing (trace.go); nil: no span
	requestAnnotation string            // WithReconcileRequests (request.go)
	migration         *[]storage.Option // WithStorageMigration (migration.go); nil: none
}

// WithRecorder makes the shell record events with r instead of the manager's recorder for
// the controller (tests pass one of their own). The shell records Warning when the object
// stalls or the logic fails, Normal Ready when it becomes Ready again after such a Warning
// (not on a new object's first readiness, which its Ready condition tells), and Normal when
// ownership.Ensure reverts drift. The manager's recorder aggregates repeated events into a
// series, so a flapping object costs a bounded number of writes.
func WithRecorder(r events.EventRecorder) Option {
	return func(o *options) { o.recorder = r }
}

// WithClock sets the clock that gives Scope.Now, stamps the conditions' transition times
// and turns requeue.At outcomes into delays; tests pass a fake one.
func WithClock(c clock.PassiveClock) Option {
	return func(o *options) { o.clock = c }
}

// WithConcurrency sets how many objects the controller reconciles at a time; the manager's
// default (controller-runtime's: one) otherwise. A reconcile mostly waits for the API server.
func WithConcurrency(n int) Option {
	return func(o *options) { o.concurrency = n }
}

// Reconcile implements controller-runtime's reconcile.Reconciler: the steps of
// docs/reconcile.md ("What one reconcile does, in order"), each step's code in the file
// its comment names; the shell's parts (docs/architecture.md) are the fields of shell.
func (r *shell[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.invalid != nil {
		return ctrl.Result{}, rtreconcile.TerminalError(r.invalid)
	}
	v, exit := r.memory.enter(req.NamespacedName)
	defer exit()
	ctx = withVisit(ctx, v)
	obj := r.newObject()
	// 1. Read (docs/reconcile.md, "What one reconcile does, in order"). Gone is no error:
	// every part forgets the object.
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.memory.forget(req.NamespacedName)
			r.children.forget(req.NamespacedName)
			r.warnings.forget(req.NamespacedName)
			r.bereaved.take(req.NamespacedName)
			r.failures.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The memory of the shell's writes (memory.go) and of the logic's writes of children
	// (children.go): no logic on a cache behind them.
	if r.options.memory.expectationTimeout > 0 {
		if wait, behind := r.memory.behind(req.NamespacedName, obj.GetResourceVersion(), r.options.clock.Now(), r.options.memory.expectationTimeout); behind {
			// The watch event of the shell's own write brings the object back.
			log.FromContext(ctx).V(1).Info("the cache has yet to show the shell's last write", "resourceVersion", obj.GetResourceVersion())
			telemetry.Deferred.WithLabelValues(r.kind, telemetry.Own).Inc()
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		if wait, behind := r.children.behind(ctx, gatedClient(r.client, r.crds, nil), r.newChild, req.NamespacedName, r.options.clock.Now(), r.options.memory.expectationTimeout); behind {
			// The watch event of the child brings the object back.
			log.FromContext(ctx).V(1).Info("the cache has yet to show the last reconcile's write of a child")
			telemetry.Deferred.WithLabelValues(r.kind, telemetry.Child).Inc()
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	// A child's deletion: read the owner fresh, so that an owner going is not given new
	// children (vanished.go).
	if r.bereaved.take(req.NamespacedName) {
		gone, err := goneLive(ctx, r.client, obj)
		if err != nil {
			r.bereaved.note(req.NamespacedName)
			return ctrl.Result{}, err
		}
		if gone {
			// The watch brings the deletion, which reconciles the object again.
			log.FromContext(ctx).V(1).Info("a child was deleted and the object is gone or going from the API server; the cache has yet to show it")
			return ctrl.Result{}, nil
		}
	}
	var this attempt
	s := Scope{Now: r.options.clock.Now(), APIReader: r.apiReader, Writer: r.writer(&this)}
	// The Gate (sharding): whether this process reconciles the object now.
	if r.gate != nil {
		labels, admitted, err := r.gate.Enter(ctx, obj)
		if !admitted || err != nil {
			return ctrl.Result{}, err
		}
		defer r.gate.Leave(ctx, obj)
		for k, v := range labels {
			s.Labels[k] = v
		}
	}
	defer func() { r.children.wrote(req.NamespacedName, this.wrote, r.options.clock.Now()) }()
	// Tracing (trace.go) around the run, then 9. Result.
	if r.options.tracer == nil {
		return r.finish(ctx, obj, r.metrics.observe(r.run(ctx, obj, s, &this)), this.held)
	}
	ctx, span := startReconcile(ctx, r.options.tracer, r.kind, obj)
	outcome := r.metrics.observe(r.run(ctx, obj, s, &this))
	endReconcile(span, outcome, this.held)
	return r.finish(ctx, obj, outcome, this.held)
}

// writer returns the Writer the shell gives the logic for one reconcile, this. Its client
// is a chain of layers, outermost first: the label of the children (ownedby.go), the noting of child writes for
// read-your-own-writes (children.go), the CRD gate (crdgate.go), then the shell's own client
// with its metrics and tracing (trace.go). Its policy is a value it holds: the declaration's
// kinds, a refusal noted in this (refusal.go), the shell's fight detector (fights.go); a
// logic that wraps the Writer's Client keeps it.
func (r *shell[T]) writer(this *attempt) ownership.Writer {
	var c client.Client = notingClient(gatedClient(r.client, r.crds, &this.waiting), r.declared.owns, &this.wrote)
	c = labellingClient{Client: c, childLabel: r.ownedBy}
	w := ownership.Writer{Client: c, FieldOwner: r.options.fieldOwner, Recorder: r.options.recorder, Owns: r.declared.owns, Labels: maps.Clone(r.ownedBy.labels)}
	if w.Labels == nil {
		w.Labels = map[string]string{} // the Gate's are added
	}
	var p writerpolicy.Policy
	r.declared.bind(&p, &this.refused)
	r.fights.bind(&p)
	return writerpolicy.Bind(w, &p)
}

// withWatch gives c the Watch that interceptor.NewClient asks of the client it wraps: the
// layers of the Writer's client are interceptor clients over the shell's client, which
// does not watch (the manager's cache does).
func withWatch(c client.Client) client.WithWatch {
	if w, ok := c.(client.WithWatch); ok {
		return w
	}
	return watchless{c}
}

// watchless is a client that refuses to watch.
type watchless struct{ client.Client }

func (w watchless) Watch(context.Context, client.ObjectList, ...client.ListOption) (apiwatch.Interface, error) {
	return nil, errors.New("reconcile: the Writer's client does not watch; the manager's cache does")
}

// subResourceWriter returns c's writer of the subresource name: its Status() for the status,
// which the shell's own client layers (the metrics of its status writes, their tracing)
// wrap, and SubResource(name) otherwise. An interceptor client reaches every subresource
// through SubResource, which would pass them by.
func subResourceWriter(c client.Client, name string) client.SubResourceWriter {
	if name == "status" {
		return c.Status()
	}
	return c.SubResource(name)
}

// attempt is what one reconcile notes besides its outcome: what the parts of the shell
// learn while the logic runs, which the shell reads once it has returned.
type attempt struct {
	refused error        // the first child kind the Writer refused: a wiring mistake (refusal.go)
	waiting error        // the first optional kind read or written while its CRD is absent (crdgate.go)
	held    bool         // a transient failure, retried without a word (WithReportAfter)
	wrote   []childWrite // the writes of children, for read-your-own-writes (children.go)
}

func (r *shell[T]) run(ctx context.Context, obj T, s Scope, this *attempt) requeue.Outcome {
	// 2. Finalizer (finalizer.go).
	if r.options.cleanup.finalizer != "" {
		if !obj.GetDeletionTimestamp().IsZero() {
			return r.cleanupDeleted(ctx, obj, s, this)
		}
		if !controllerutil.ContainsFinalizer(obj, r.options.cleanup.finalizer) {
			if err := r.patch(ctx, obj, func() { controllerutil.AddFinalizer(obj, r.options.cleanup.finalizer) }); err != nil {
				return requeue.Retry(err)
			}
		}
	} else if !obj.GetDeletionTimestamp().IsZero() {
		return requeue.Done()
	}
	// 3. Pause (pause.go).
	if reason, resume := r.pausedBy(obj); reason != "" {
		return r.pause(ctx, obj, s.Now, reason, resume)
	}

	// 4. Logic, then what the parts learnt while it ran: a kind refused (refusal.go), an
	// optional kind whose CRD is absent (crdgate.go), an owner reference that cannot be.
	before := obj.DeepCopyObject().(T)
	conds, hasConditions := any(obj).(conditions.Setter)
	if hasConditions {
		strip(conds) // last reconcile's: the logic starts from its own conditions
	}
	outcome := r.logic.Reconcile(ctx, obj, s)
	if err := revertUnwritable(before, obj); err != nil {
		outcome = requeue.Merge(outcome, requeue.Terminal(err))
	}
	if this.refused != nil {
		outcome = r.declared.verdict(outcome, this.refused)
	} else if this.waiting != nil {
		outcome = waitForCRD(obj, this.waiting) // the CRD's arrival reconciles obj again
	}
	invalid := invalidOwner(outcome.Err())
	if invalid != nil && this.refused == nil && this.waiting == nil {
		// An owner reference the garbage collector would break: no retry mends it, a
		// change of the code or of the owner's CRD does, which the error names.
		outcome = requeue.Terminal(outcome.Err())
	}
	quiet := isQuiet(outcome.Err())
	if !quiet && !outcome.IsTerminal() {
		if this.held = r.failures.held(client.ObjectKeyFromObject(obj), outcome.Err(), r.options.retry.reportAfter); this.held {
			return outcome // nothing written: the retry will do better, or say so
		}
	} else if outcome.IsTerminal() {
		r.failures.forget(client.ObjectKeyFromObject(obj))
	}
	// 5. observedGeneration.
	if outcome.Err() == nil || outcome.IsTerminal() {
		if s, ok := any(obj).(ObservedGenerationSetter); ok {
			s.SetObservedGeneration(obj.GetGeneration())
		}
		r.handled(obj)
	}
	// 6. The standard conditions (status.go).
	var news []shellEvent
	if hasConditions {
		old := any(before).(conditions.Setter)
		logicSet := strip(conds)
		if this.waiting != nil && this.refused == nil {
			logicSet.stalled = &metav1.Condition{Reason: ReasonWaitingForCRD, Message: this.waiting.Error()}
		}
		if invalid != nil && this.refused == nil && this.waiting == nil && logicSet.stalled == nil {
			logicSet.stalled = &metav1.Condition{Reason: ReasonInvalidOwner, Message: outcome.Err().Error()}
		}
		if quiet {
			restore(conds, old)
		} else {
			markStandard(conds, logicSet, outcome)
		}
		stamp(conds, old, s.Now)
		news = transitions(conds, old, r.warnings.after(client.ObjectKeyFromObject(obj), old, conds))
	}
	// 7. Writes, only on change (write.go), paced while only progress (memory.go).
	if !equality.Semantic.DeepEqual(before, obj) {
		if wait, hold := r.holdProgress(before, obj); hold {
			return requeue.Merge(outcome, requeue.After(wait))
		}
		err := r.write(ctx, before, obj)
		switch {
		case apierrors.IsNotFound(err):
			return requeue.Done()
		case err != nil && outcome.Err() != nil:
			return outcome // the logic's error says more; its retry writes the status again
		case err != nil:
			return requeue.Retry(err)
		}
	}
	// 8. Events, once the write succeeded.
	for _, e := range news {
		r.event(obj, e.kind, e.reason, e.note)
	}
	return outcome
}

// ignoreOwnWrites is the predicate of the watch of the reconciled kind: it drops the watch
// event of the shell's own write of an object, the object as the last reconcile left it,
// which a reconcile would find nothing to do for. Every other event passes: a change by
// anyone else (a new resourceVersion), the informer's periodic resync, the event of a write
// while a reconcile of the object runs or waits for that write. Changes to children come
// through their own watches. Without it every status write would cost one more reconcile.
// It needs read-your-own-writes (WithExpectationTimeout above 0, the default): the memory
// of the shell's writes is what tells them apart.
func (r *shell[T]) ignoreOwnWrites() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil || e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() {
			return true
		}
		return !r.memory.echo(client.ObjectKeyFromObject(e.ObjectNew), e.ObjectNew.GetResourceVersion())
	}}
}

// patch changes obj's metadata with a merge patch guarded by its resourceVersion.
func (r *shell[T]) patch(ctx context.Context, obj T, change func()) error {
	defer r.memory.writing(client.ObjectKeyFromObject(obj))()
	before := obj.DeepCopyObject().(T)
	change()
	if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(r.options.fieldOwner)); err != nil {
		return err
	}
	r.remember(ctx, obj)
	return nil
}

// remember records the shell's write of obj, made by the reconcile ctx carries, now at the
// resourceVersion the API server answered.
func (r *shell[T]) remember(ctx context.Context, obj T) {
	rv := obj.GetResourceVersion()
	if r.options.memory.expectationTimeout <= 0 {
		rv = ""
	}
	r.memory.wrote(client.ObjectKeyFromObject(obj), visitOf(ctx), rv, r.options.clock.Now(), reconciling(obj))
}

// holdProgress reports whether the change from before to obj is progress to be written
// later (see WithProgressInterval), and how much later at most.
func (r *shell[T]) holdProgress(before, obj T) (time.Duration, bool) {
	if r.options.memory.progressInterval <= 0 || !onlyProgress(before, obj) {
		return 0, false
	}
	last, ok := r.memory.lastProgress(client.ObjectKeyFromObject(obj))
	if !ok {
		return 0, false
	}
	wait := r.options.memory.progressInterval - r.options.clock.Now().Sub(last)
	return wait, wait > 0
}

// event records an event on obj when the shell has a recorder. The event names obj without
// its resourceVersion, so that the recorder folds repeats of a reason into one series
// instead of writing an event for every version of a flapping object.
func (r *shell[T]) event(obj T, kind, reason, note string) {
	if r.options.recorder == nil {
		return
	}
	regarding := obj.DeepCopyObject().(T)
	regarding.SetResourceVersion("")
	r.options.recorder.Eventf(regarding, nil, kind, reason, "Reconcile", "%s", note)
}

// isQuiet reports whether err only says that the object or a child changed since the cache
// saw it: the write that won will trigger another reconcile anyway.
func isQuiet(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
}

// finish turns the outcome into controller-runtime's result. Conflicts and stale-cache
// answers are quiet requeues; a held transient failure is retried with no event.
func (r *shell[T]) finish(ctx context.Context, obj T, outcome requeue.Outcome, held bool) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	if err := outcome.Err(); err != nil {
		if isQuiet(err) {
			logger.V(1).Info("requeued after a conflict", "reason", err.Error())
			return ctrl.Result{RequeueAfter: conflictDelay}, nil
		}
		if !held && !r.fights.reported(err) { // the fight has a Warning of its own
			r.event(obj, corev1.EventTypeWarning, "ReconcileError", err.Error())
		}
	}
	result, err := outcome.Result(r.options.clock.Now())
	switch {
	case err != nil || outcome.Err() == nil:
	case r.fights.reported(outcome.Err()):
		// Logged once when the fight was detected; each held-off reconcile is not news.
		logger.V(1).Info("backing off a fight", "reason", outcome.Err().Error(), "retryAfter", result.RequeueAfter)
	default:
		// The outcome keeps a delay, so the error is not returned; log it here instead.
		logger.Error(outcome.Err(), "reconcile failed", "retryAfter", result.RequeueAfter)
	}
	return result, err
}
