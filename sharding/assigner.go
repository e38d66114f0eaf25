package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// controllerIndex indexes children by the UID of their controller.
const controllerIndex = "sharding.controllerUID"

// resweep is how often the shard that assigns sweeps every object again, ring change or
// not. Another replica can act for a while on a view of the Leases that this one never
// had (a Lease watch that lags keeps a replica first, or makes it first, in its own
// eyes) and place objects under its ring; this replica's ring did not change, so nothing
// else would look at them again, and they would stay on a shard the ring does not give
// them for good. A sweep that moves nothing costs a list of the objects' metadata, a
// page of 500 at a time. A variable so that a test can shorten it.
var resweep = 5 * time.Minute

// workers is how many objects the assigner labels at a time.
const workers = 16

// pageSize is how many objects a sweep lists at a time: a sweep holds the objects that
// move, never a list of every object at once.
const pageSize = 500

// The assigner's own client-side rate limit: a shard's share moves with two patches an
// object (its child's, its own), and controller-runtime's default of 20 requests a second
// would make moving a thousand objects take over a minute; at 200 a second a killed
// shard's 1500 objects would wait 15 s for their patches alone. The assigner's client is
// its own, so this takes nothing from the manager's; the API server's priority and
// fairness still protects the server.
const (
	writeQPS   = 1000
	writeBurst = 2000
)

// assigner labels objects, and their children, for the shard the ring of live shards
// gives them. It runs on every replica and acts on the first live shard by name only:
// when that shard dies, the next one acts as soon as the dead one's Lease has expired.
//
// Every replica watches the ring's Leases. Only the one that acts caches anything else:
// the metadata of the objects and children that have no shard label (new ones, and those
// a shard has let go in a drain). What must move when the ring changes it lists, page by
// page, with the label selector of the shards concerned.
type assigner struct {
	shard     *Shard
	mgr       manager.Manager
	writer    client.Client // uncached: reads what has a shard, and writes every label
	leases    cache.Cache   // the ring's Leases
	objectGVK schema.GroupVersionKind
	children  []schema.GroupVersionKind

	mu     sync.Mutex
	ring   *Ring
	live   map[string]bool
	acting bool

	waiting  waiting                                 // the objects without a live shard, while acting
	strays   workqueue.TypedDelayingInterface[stray] // children to look at, see releaseStrays
	released atomic.Int64                            // children let go because their owner was not this shard's

	readMu sync.Mutex       // guards read and readAt
	read   sets.Set[string] // the live shards as confirmGone last read them from the API server
	readAt time.Time
}

// isActing reports whether this shard assigns.
func (a *assigner) isActing() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acting
}

func newAssigner(s *Shard, mgr manager.Manager) *assigner {
	return &assigner{shard: s, mgr: mgr, ring: NewRing(), live: map[string]bool{}}
}

// NeedLeaderElection is false: every replica runs the assigner; the first live shard
// acts.
func (a *assigner) NeedLeaderElection() bool { return false }

// selector returns the selector the operator's cache has for kind, with req added.
func (a *assigner) selector(kind reflect.Type, req labels.Requirement) labels.Selector {
	return a.shard.childSelectors[kind].DeepCopySelector().Add(req)
}

// Start watches the ring's Leases and, while this shard is the first live one, assigns
// until ctx is done.
func (a *assigner) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("sharding").WithValues("ring", a.shard.opts.Ring)
	ctx = log.IntoContext(ctx, logger)
	if err := registerMetrics(); err != nil {
		return err
	}
	collector.add(a)
	defer collector.remove(a)
	scheme := a.mgr.GetScheme()
	cfg := rest.CopyConfig(a.mgr.GetConfig())
	cfg.QPS, cfg.Burst = max(cfg.QPS, writeQPS), max(cfg.Burst, writeBurst)
	writer, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: a.mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	a.writer = writer
	if a.objectGVK, err = apiutil.GVKForObject(a.shard.object, scheme); err != nil {
		return err
	}
	for _, child := range a.shard.children {
		gvk, err := apiutil.GVKForObject(child, scheme)
		if err != nil {
			return err
		}
		a.children = append(a.children, gvk)
	}

	a.leases, err = cache.New(a.mgr.GetConfig(), cache.Options{
		Scheme: scheme, Mapper: a.mgr.GetRESTMapper(),
		DefaultNamespaces:    map[string]cache.Config{a.shard.opts.Namespace: {}},
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{LabelRing: a.shard.opts.Ring}),
	})
	if err != nil {
		return err
	}
	membership := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case membership <- struct{}{}:
		default:
		}
	}
	if err := watch(ctx, a.leases, &coordinationv1.Lease{}, toolscache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke,
	}); err != nil {
		return err
	}
	cacheDone := make(chan error, 1)
	go func() { cacheDone <- a.leases.Start(ctx) }()
	if !a.leases.WaitForCacheSync(ctx) {
		return <-cacheDone
	}
	strays, err := a.releaseStrays(ctx)
	if err != nil {
		return err
	}
	defer strays.Wait() // ends with ctx

	var s *session // while acting
	defer func() { s.end() }()

	// Membership: recomputed on every change of a Lease, and when the first live Lease
	// would expire unless renewed. A sweep that failed is tried again a second later.
	expiry := time.NewTimer(time.Hour)
	defer expiry.Stop()
	report := time.NewTicker(waitReport)
	defer report.Stop()
	again := time.NewTicker(resweep)
	defer again.Stop()
	var crds <-chan time.Time // while a child kind is optional
	if a.shard.kinds.hasOptional() {
		t := time.NewTicker(crdRecheck)
		defer t.Stop()
		crds = t.C
	}
	var pending sweep
	poke(nil)
	for {
		select {
		case <-ctx.Done():
			return <-cacheDone
		case <-report.C:
			a.reportWaiting(ctx)
			continue
		case <-crds:
			if !a.followKinds(ctx) {
				continue
			}
			// The session's cache holds the kinds served when it began: the next one
			// holds those served now, and a sweep looks again at what the last one's
			// queue held, as when a spent session is replaced.
			if s != nil {
				pending.all = true
			}
			s.end()
			s = nil
		case <-again.C:
			if a.isActing() {
				pending.all = true // see resweep
			}
		case <-membership:
		case <-expiry.C:
		}
		next, err := a.recompute(ctx, &pending)
		if err != nil {
			return err
		}
		if s, err = a.session(ctx, s, &pending); err != nil {
			logger.Error(err, "Watching what has no shard failed; retrying")
			expiry.Reset(time.Second)
			continue
		}
		if s != nil && pending.due() {
			if err := a.sweep(ctx, s, pending); err != nil {
				logger.Error(err, "Sweep failed; retrying")
				next = min(next, time.Second)
			} else {
				pending = sweep{}
			}
		}
		expiry.Reset(next)
	}
}

// followKinds asks which optional child kinds are served now, watches the strays of
// those that came, and reports whether any came or went.
func (a *assigner) followKinds(ctx context.Context) bool {
	logger := log.FromContext(ctx)
	came, went, err := a.shard.kinds.refresh(ctx)
	if err != nil {
		if ctx.Err() == nil {
			logger.Error(err, "Asking whether the optional child kinds are served failed; retrying")
		}
		return false
	}
	for _, i := range came {
		logger.Info("A child kind's CRD is established: its children are assigned from now on", "kind", a.children[i].Kind)
		// Bounded: a CRD removed meanwhile would leave the informer unsynced for ever.
		watchCtx, cancel := context.WithTimeout(ctx, time.Minute)
		err := a.watchStrays(watchCtx, i)
		cancel()
		if err != nil {
			logger.Error(err, "Watching the children of a kind whose CRD came failed; retrying", "kind", a.children[i].Kind)
			a.shard.kinds.forget(i) // came again at the next refresh
		}
	}
	for _, i := range went {
		logger.Info("A child kind's CRD is gone: its children are no longer assigned", "kind", a.children[i].Kind)
	}
	return len(came) > 0 || len(went) > 0
}

// session is what a shard runs while it assigns: a cache of the metadata of the objects
// and children that have no shard, and a queue of objects to look at, with its workers.
// It counts the objects its cache holds and the most it has held.
type session struct {
	cache.Cache
	queue      workqueue.TypedRateLimitingInterface[types.NamespacedName]
	stop       context.CancelFunc
	workers    sync.WaitGroup
	held, peak atomic.Int64
	served     []bool // by index of Shard.children, the kinds its cache holds: those served when it began
}

// count adds n to the objects s holds.
func (s *session) count(n int64) {
	held := s.held.Add(n)
	for peak := s.peak.Load(); held > peak && !s.peak.CompareAndSwap(peak, held); peak = s.peak.Load() {
	}
}

// spent reports whether s once held many objects and now holds few, with nothing queued:
// an informer and a queue keep the size of their maps (a Go map does not shrink), so a
// session that took a batch of thousands, such as a population that had no shard when
// sharding was turned on, would keep their room for good.
func (s *session) spent() bool {
	peak := s.peak.Load()
	return peak >= spentPeak && s.held.Load()*16 <= peak && s.queue.Len() == 0
}

// spentPeak is the size of batch after which a session is replaced once the batch has
// been assigned.
const spentPeak = 1024

// end stops s, if any, and waits for its workers.
func (s *session) end() {
	if s == nil {
		return
	}
	s.stop()
	s.queue.ShutDown()
	s.workers.Wait()
}

// session returns the session this shard must run now: none when it does not act, s
// while it serves, and a new one when the shard starts acting or s is spent. A session
// that replaces a spent one sweeps everything, for what the old one's queue held to
// retry.
func (a *assigner) session(ctx context.Context, s *session, pending *sweep) (*session, error) {
	a.mu.Lock()
	acting := a.acting
	a.mu.Unlock()
	switch {
	case !acting:
		s.end()
		a.waiting.reset() // what its session met since the shard stopped acting
		return nil, nil
	case s != nil && !s.spent():
		return s, nil
	}
	fresh, err := a.begin(ctx)
	if err != nil {
		return s, err
	}
	if s != nil {
		log.FromContext(ctx).Info("New assigning session: the last one's cache held a batch, now assigned", "peak", s.peak.Load())
		s.end()
		pending.all = true
	}
	return fresh, nil
}

// begin starts a session: its cache, synced, hands each object that has no shard, and the
// owner of each child that has none, to its queue.
func (a *assigner) begin(ctx context.Context) (*session, error) {
	none, _ := labels.NewRequirement(a.shard.shardLabel, selection.DoesNotExist, nil)
	owners := metadataOf(a.objectGVK)
	byObject := map[client.Object]cache.ByObject{
		owners: {Label: a.selector(reflect.TypeOf(a.shard.object), *none)},
	}
	served := a.shard.kinds.snapshot()
	var children []*metav1.PartialObjectMetadata
	for i, gvk := range a.children {
		if !served[i] {
			continue // its cache would never sync; a session begins again when it is served
		}
		meta := metadataOf(gvk)
		children = append(children, meta)
		byObject[meta] = cache.ByObject{Label: a.selector(reflect.TypeOf(a.shard.children[i]), *none)}
	}
	c, err := cache.New(a.mgr.GetConfig(), cache.Options{
		Scheme: a.mgr.GetScheme(), Mapper: a.mgr.GetRESTMapper(), ByObject: byObject,
		DefaultNamespaces: a.shard.defaultNamespaces,
		// Labels and owner references are all it reads.
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	s := &session{Cache: c, stop: stop, served: served, queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "sharding-" + a.shard.opts.Ring})}
	counted := func(each, gone func(client.Object)) toolscache.ResourceEventHandler {
		return toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				s.count(1)
				if o, ok := unwrap(obj); ok {
					each(o)
				}
			},
			UpdateFunc: func(_, obj any) {
				if o, ok := unwrap(obj); ok {
					each(o)
				}
			},
			DeleteFunc: func(obj any) {
				s.count(-1)
				if o, ok := unwrap(obj); ok && gone != nil {
					gone(o)
				}
			},
		}
	}
	// What this cache holds has no shard: it waits until it leaves the cache, labelled
	// (or deleted).
	err = watch(ctx, c, owners, counted(func(o client.Object) {
		key := client.ObjectKeyFromObject(o)
		a.waiting.add(key, time.Now())
		s.queue.Add(key)
	}, func(o client.Object) { a.waiting.remove(client.ObjectKeyFromObject(o)) }))
	for _, child := range children {
		if err == nil {
			err = c.IndexField(ctx, child, controllerIndex, controllerUID)
		}
		if err == nil {
			// A child without a shard (created before sharding was on, or let go by a
			// draining shard) brings its owner back, whose shard it is given.
			err = watch(ctx, c, child, counted(func(o client.Object) {
				if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == a.objectGVK.Kind {
					s.queue.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name})
				}
			}, nil))
		}
	}
	if err != nil {
		s.end()
		return nil, err
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			log.FromContext(ctx).Error(err, "Watching what has no shard stopped")
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		s.end()
		return nil, errors.New("the cache of what has no shard did not sync")
	}
	for range workers {
		s.workers.Go(func() {
			for a.next(ctx, s) {
			}
		})
	}
	return s, nil
}

// sweep is what a change of the ring asks the assigner to look at again: every object
// with a shard, or only those of the shards that left.
type sweep struct {
	all  bool
	gone sets.Set[string]
}

func (s sweep) due() bool { return s.all || s.gone.Len() > 0 }

// recompute takes the live shards from the Leases, adds to pending what their change
// asks to sweep, and returns how long until it must look again.
//
// A change is confirmed on the API server first. A shard that looks gone has its objects
// moved without a drain, and under load this replica's Lease watch can fall behind the
// renewals by more than a lease duration (issue 34): a live shard's Lease would look
// expired, and its objects would be moved while it still reconciles them. A fresh read
// costs one list of the ring's few Leases, and only when the live shards seem to change.
func (a *assigner) recompute(ctx context.Context, pending *sweep) (time.Duration, error) {
	var leases coordinationv1.LeaseList
	if err := a.leases.List(ctx, &leases); err != nil {
		return 0, err
	}
	now := time.Now()
	shards, expiry := Live(leases.Items, now)
	a.mu.Lock()
	seen := sets.KeySet(a.live)
	a.mu.Unlock()
	if !seen.Equal(sets.New(shards...)) {
		var err error
		if shards, expiry, err = a.readLeases(ctx); err != nil {
			// Unconfirmed, so not acted on: the shards stay as they were.
			if ctx.Err() == nil {
				log.FromContext(ctx).Error(err, "Reading the shard Leases failed; retrying")
			}
			return time.Second, nil
		}
		now = time.Now()
	}
	next := time.Hour
	if !expiry.IsZero() {
		// Just past the expiry, so that a renewal in time is seen first.
		next = expiry.Sub(now) + 100*time.Millisecond
	}
	acting := len(shards) > 0 && shards[0] == a.shard.opts.Name

	a.mu.Lock()
	defer a.mu.Unlock()
	old := sets.KeySet(a.live)
	changed := !old.Equal(sets.New(shards...))
	if changed {
		a.ring = NewRing(shards...)
		a.live = make(map[string]bool, len(shards))
		for _, s := range shards {
			a.live[s] = true
		}
	}
	logger := log.FromContext(ctx)
	switch {
	case acting && !a.acting:
		// Taking over: what the one before left undone is unknown.
		logger.Info("Assigning objects to shards", "live", shards)
		*pending = sweep{all: true}
	case !acting:
		if a.acting {
			logger.Info("No longer assigning: another shard is first", "live", shards)
			a.waiting.reset()
		}
		*pending = sweep{}
	case changed:
		logger.Info("Shards changed", "live", shards)
		if added := sets.New(shards...).Difference(old); added.Len() > 0 {
			pending.all = true // the new shards take a share of every other's
		} else {
			pending.gone = old.Difference(sets.New(shards...)).Union(pending.gone)
		}
	}
	a.acting = acting
	return next, nil
}

// readLeases returns the live shards, and when the first of them expires, from the
// ring's Leases read from the API server rather than from the watch.
func (a *assigner) readLeases(ctx context.Context) ([]string, time.Time, error) {
	var leases coordinationv1.LeaseList
	if err := a.writer.List(ctx, &leases, client.InNamespace(a.shard.opts.Namespace), client.MatchingLabels{LabelRing: a.shard.opts.Ring}); err != nil {
		return nil, time.Time{}, err
	}
	shards, expiry := Live(leases.Items, time.Now())
	return shards, expiry, nil
}

// confirmGone returns an error when shard, which this replica's ring does not have, is
// live on the API server. The ring misses a shard that has just started when the Lease
// watch lags (recompute confirms only the changes the watch shows), and an object on
// that shard would be moved without a drain. One read serves the moves of a second.
func (a *assigner) confirmGone(ctx context.Context, shard string) error {
	a.readMu.Lock() // held across the read: the workers wait for one read, not make one each
	defer a.readMu.Unlock()
	if time.Since(a.readAt) >= time.Second {
		shards, _, err := a.readLeases(ctx)
		if err != nil {
			return err
		}
		a.read, a.readAt = sets.New(shards...), time.Now()
	}
	if a.read.Has(shard) {
		return fmt.Errorf("shard %s is live, but not yet in this replica's ring: its watch of the Leases lags", shard)
	}
	return nil
}

// snapshot returns the ring and the live shards.
func (a *assigner) snapshot() (*Ring, map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ring, a.live
}

// sweep looks again at the objects s names, and at every object without a shard. It
// lists them a page at a time and keeps only those that move; the children of those
// that are assigned it lists once for all of them, by the shards they leave.
func (a *assigner) sweep(ctx context.Context, s *session, sw sweep) error {
	began := time.Now()
	ring, live := a.snapshot()
	var unassigned metav1.PartialObjectMetadataList
	unassigned.SetGroupVersionKind(listOf(a.objectGVK))
	if err := s.List(ctx, &unassigned); err != nil {
		return err
	}
	for i := range unassigned.Items {
		s.queue.Add(client.ObjectKeyFromObject(&unassigned.Items[i]))
	}

	req, err := labels.NewRequirement(a.shard.shardLabel, selection.Exists, nil)
	if !sw.all {
		req, err = labels.NewRequirement(a.shard.shardLabel, selection.In, sets.List(sw.gone))
	}
	if err != nil {
		return err
	}
	var drains, assigns []metav1.PartialObjectMetadata
	leaving := sets.New[string]()
	err = a.list(ctx, a.objectGVK, a.selector(reflect.TypeOf(a.shard.object), *req), func(o *metav1.PartialObjectMetadata) {
		switch step, current, _ := a.decide(o, ring, live); step {
		case Drain:
			drains = append(drains, *o)
		case Assign:
			assigns = append(assigns, *o)
			leaving.Insert(current)
			a.waiting.add(client.ObjectKeyFromObject(o), began)
		}
	})
	if err != nil {
		return err
	}

	// The children on the shards that left: those of the objects assigned, by their
	// owner's UID, and strays, whose owner is elsewhere (labelled on a decision that did
	// not hold, see releaseStrays): no shard's cache holds those, so they lose their label
	// here, and the watch of what has no shard gives them their owner's.
	kids := map[types.UID][]metav1.PartialObjectMetadata{}
	var strays []metav1.PartialObjectMetadata
	dead := leaving.Union(sw.gone)
	for shard := range dead {
		if live[shard] {
			dead.Delete(shard) // back already
		}
	}
	if dead.Len() > 0 {
		owners := sets.New[types.UID]()
		for _, o := range assigns {
			owners.Insert(o.GetUID())
		}
		from, err := labels.NewRequirement(a.shard.shardLabel, selection.In, sets.List(dead))
		if err != nil {
			return err
		}
		for i, gvk := range a.children {
			if !s.served[i] {
				continue
			}
			err := a.list(ctx, gvk, a.selector(reflect.TypeOf(a.shard.children[i]), *from), func(c *metav1.PartialObjectMetadata) {
				switch ref := metav1.GetControllerOf(c); {
				case ref == nil || ref.Kind != a.objectGVK.Kind:
				case owners.Has(ref.UID):
					kids[ref.UID] = append(kids[ref.UID], *c)
				default:
					strays = append(strays, *c)
				}
			})
			if err != nil {
				return err
			}
		}
	}

	work := make(chan func() error)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for do := range work {
				if err := do(); err != nil {
					log.FromContext(ctx).V(1).Info("Move failed; retrying", "error", err.Error())
				}
			}
		})
	}
	for _, c := range strays {
		work <- func() error {
			// Guarded: a child relabelled since the list is its owner's already.
			err := a.patchLabels(ctx, &c, map[string]any{a.shard.shardLabel: nil})
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	for _, o := range drains {
		work <- func() error {
			return s.retryOnFailure(&o, a.patchLabels(ctx, &o, map[string]any{a.shard.drainLabel: "true"}))
		}
	}
	for _, o := range assigns {
		children := kids[o.GetUID()]
		if children == nil {
			children = []metav1.PartialObjectMetadata{} // listed: none
		}
		work <- func() error { return s.retryOnFailure(&o, a.move(ctx, s, &o, children)) }
	}
	close(work)
	wg.Wait()
	log.FromContext(ctx).Info("Swept", "all", sw.all, "gone", sets.List(sw.gone), "drained", len(drains), "assigned", len(assigns), "strays", len(strays), "took", time.Since(began).Round(time.Millisecond).String())
	return nil
}

// retryOnFailure hands the object to the queue, which reads it again, when err is set.
func (s *session) retryOnFailure(o *metav1.PartialObjectMetadata, err error) error {
	if err != nil {
		s.queue.AddRateLimited(client.ObjectKeyFromObject(o))
	}
	return err
}

// list calls each for every object of kind gvk that selector matches, a page at a time,
// read from the API server.
func (a *assigner) list(ctx context.Context, gvk schema.GroupVersionKind, selector labels.Selector, each func(*metav1.PartialObjectMetadata)) error {
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: selector}, client.Limit(pageSize)}
	namespaces := []string{""}
	if len(a.shard.defaultNamespaces) > 0 {
		namespaces = namespaces[:0]
		for ns := range a.shard.defaultNamespaces {
			namespaces = append(namespaces, ns)
		}
	}
	for _, ns := range namespaces {
		var page metav1.PartialObjectMetadataList
		for cont := ""; ; {
			page.SetGroupVersionKind(listOf(gvk))
			if err := a.writer.List(ctx, &page, append(opts, client.InNamespace(ns), client.Continue(cont))...); err != nil {
				return err
			}
			for i := range page.Items {
				o := &page.Items[i]
				o.SetGroupVersionKind(gvk)
				o.SetManagedFields(nil)
				each(o)
			}
			if cont = page.GetContinue(); cont == "" {
				break
			}
		}
	}
	return nil
}

// next handles one object from the queue of s; it returns false once the queue is shut
// down.
func (a *assigner) next(ctx context.Context, s *session) bool {
	key, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(key)
	if err := a.assign(ctx, s, key); err != nil {
		log.FromContext(ctx).V(1).Info("Assignment failed; retrying", "object", key, "error", err.Error())
		s.queue.AddRateLimited(key)
		return true
	}
	s.queue.Forget(key)
	return true
}

// assign reads the object key names, from the cache of s when it has no shard, else from
// the API server, and takes its step.
func (a *assigner) assign(ctx context.Context, s *session, key types.NamespacedName) error {
	obj := metadataOf(a.objectGVK)
	err := s.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		err = a.writer.Get(ctx, key, obj)
	}
	if apierrors.IsNotFound(err) {
		a.waiting.remove(key)
	}
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	return a.move(ctx, s, obj, nil)
}

// decide returns the step Decide gives for obj, with its shard.
func (a *assigner) decide(obj *metav1.PartialObjectMetadata, ring *Ring, live map[string]bool) (Step, string, string) {
	want := ring.Shard(Key(a.objectGVK.Group, a.objectGVK.Kind, obj.GetNamespace(), obj.GetName()))
	current := obj.GetLabels()[a.shard.shardLabel]
	_, draining := obj.GetLabels()[a.shard.drainLabel]
	return Decide(current, draining, want, func(s string) bool { return live[s] }), current, want
}

// move takes the step Decide gives for obj. labelled are its children that carry its
// current shard's label; nil when they were not listed.
func (a *assigner) move(ctx context.Context, s *session, obj *metav1.PartialObjectMetadata, labelled []metav1.PartialObjectMetadata) error {
	ring, live := a.snapshot()
	step, current, want := a.decide(obj, ring, live)
	key := client.ObjectKeyFromObject(obj)
	if step != Assign && live[current] {
		a.waiting.remove(key) // on a live shard, draining or not
	}
	switch step {
	case Drain:
		return a.patchLabels(ctx, obj, map[string]any{a.shard.drainLabel: "true"})
	case Keep:
		if current == want && want != "" {
			// Children without a shard follow their owner's.
			return a.labelChildren(ctx, s, obj, want, nil)
		}
		return nil
	}
	if current != "" {
		if err := a.confirmGone(ctx, current); err != nil {
			return err // kept, and looked at again
		}
	}
	// Assign: children first, so that the new shard finds them in its cache when it
	// first sees the object.
	if labelled == nil && current != "" {
		var err error
		if labelled, err = a.childrenOn(ctx, obj, current); err != nil {
			return err
		}
	}
	a.waiting.add(key, time.Now())
	if err := a.labelChildren(ctx, s, obj, want, labelled); err != nil {
		return err
	}
	if err := a.patchLabels(ctx, obj, map[string]any{a.shard.shardLabel: want, a.shard.drainLabel: nil}); err != nil {
		return err
	}
	a.waiting.remove(key)
	return nil
}

// childrenOn lists, from the API server, the children of owner labelled for shard: what
// a shard that died left behind. A sweep lists these for all the objects it moves at
// once; this is for the object that comes back alone, after a failed move.
func (a *assigner) childrenOn(ctx context.Context, owner client.Object, shard string) ([]metav1.PartialObjectMetadata, error) {
	on, err := labels.NewRequirement(a.shard.shardLabel, selection.Equals, []string{shard})
	if err != nil {
		return nil, err
	}
	var found []metav1.PartialObjectMetadata
	for i, gvk := range a.children {
		if !a.shard.kinds.isServed(i) {
			continue
		}
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(listOf(gvk))
		selector := a.selector(reflect.TypeOf(a.shard.children[i]), *on)
		if err := a.writer.List(ctx, &list, client.InNamespace(owner.GetNamespace()), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, err
		}
		for _, c := range list.Items {
			if ref := metav1.GetControllerOf(&c); ref != nil && ref.UID == owner.GetUID() {
				c.SetGroupVersionKind(gvk)
				found = append(found, c)
			}
		}
	}
	return found, nil
}

// labelChildren labels for shard the children of owner in labelled and those without a
// shard, which the cache of s holds.
func (a *assigner) labelChildren(ctx context.Context, s *session, owner client.Object, shard string, labelled []metav1.PartialObjectMetadata) error {
	children := slices.Clone(labelled)
	for i, gvk := range a.children {
		if !s.served[i] {
			continue
		}
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(listOf(gvk))
		if err := s.List(ctx, &list, client.InNamespace(owner.GetNamespace()), client.MatchingFields{controllerIndex: string(owner.GetUID())}); err != nil {
			return err
		}
		for _, c := range list.Items {
			c.SetGroupVersionKind(gvk)
			children = append(children, c)
		}
	}
	for i := range children {
		child := &children[i]
		if child.GetLabels()[a.shard.shardLabel] == shard {
			continue
		}
		// Not guarded by its resourceVersion: a child's label only follows its owner's.
		child.SetResourceVersion("")
		if err := client.IgnoreNotFound(a.patchLabels(ctx, child, map[string]any{a.shard.shardLabel: shard})); err != nil {
			return err
		}
	}
	return nil
}

// patchLabels sets labels (nil removes one) on obj with a merge patch, guarded by its
// resourceVersion when it has one: the decision was taken on that version.
func (a *assigner) patchLabels(ctx context.Context, obj *metav1.PartialObjectMetadata, labels map[string]any) error {
	meta := map[string]any{"labels": labels}
	if rv := obj.GetResourceVersion(); rv != "" {
		meta["resourceVersion"] = rv
	}
	data, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	if err := a.writer.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("labelling %s %s/%s: %w", obj.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// watch adds handler to the informer of obj's kind in c.
func watch(ctx context.Context, c cache.Cache, obj client.Object, handler toolscache.ResourceEventHandler) error {
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(handler)
	return err
}

// metadataOf returns an empty metadata-only object of kind gvk.
func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// listOf returns the kind of a list of gvk.
func listOf(gvk schema.GroupVersionKind) schema.GroupVersionKind {
	return gvk.GroupVersion().WithKind(gvk.Kind + "List")
}

// unwrap returns the object of an informer event, a deleted one's included.
func unwrap(obj any) (client.Object, bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(client.Object)
	return o, ok
}

// controllerUID indexes an object by its controller's UID.
func controllerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// waitReport is how often the shard that assigns logs the objects that have waited for a
// live shard longer than waitReport.
const waitReport = 30 * time.Second

// reportWaiting logs how many objects have no live shard and how long the oldest has
// waited, when it has waited longer than waitReport: an object that no shard takes shows
// in the log as well as in the metrics.
func (a *assigner) reportWaiting(ctx context.Context) {
	n, oldest, which := a.waiting.stats(time.Now())
	if n == 0 || oldest < waitReport || !a.isActing() {
		return
	}
	ring, live := a.snapshot()
	obj := metadataOf(a.objectGVK)
	detail := []any{"objects", n, "oldest", oldest.Round(time.Second).String(), "object", which, "live", sets.List(sets.KeySet(live))}
	if err := a.writer.Get(ctx, which, obj); err == nil {
		step, current, want := a.decide(obj, ring, live)
		_, draining := obj.GetLabels()[a.shard.drainLabel]
		detail = append(detail, "shard", current, "draining", draining, "want", want, "step", step.String())
	}
	log.FromContext(ctx).Info("Objects wait for a live shard", detail...)
}

// strayGrace is how long a child in this shard's cache may have an owner that is not in
// the cache before the owner is read from the API server: the assigner labels children
// before their owner, so a moment without the owner is the rule on a move.
const strayGrace = 2 * time.Second

// stray names a child in this shard's cache: the index of its kind in the shard's
// Children, and its key.
type stray struct {
	kind int
	types.NamespacedName
}

// releaseStrays lets go of every child in this shard's cache whose owner is not this
// shard's, until ctx is done: it removes the child's shard label, and the assigner, which
// watches what has no shard, gives the child its owner's shard.
//
// A child can be left behind so: a shard acknowledging a drain lets go of the children
// its cache holds, and a child the assigner labelled for it shortly before (moving it
// from a shard that died, or from no shard when sharding is turned on) may not have
// reached its cache yet, since the children's and the owners' watches are separate
// streams. Its owner then moves on without it, and nobody else would ever look at the
// child again: it stayed in this shard's cache and out of its owner's shard's. The same
// holds for a child labelled on a decision the assigner took from a stale read, whose
// owner's guarded patch then failed. So every shard looks at the owner of each child its
// cache receives, and of each whose owner is draining once more after a while.
func (a *assigner) releaseStrays(ctx context.Context) (*sync.WaitGroup, error) {
	queue := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[stray]{Name: "sharding-strays-" + a.shard.opts.Ring})
	var running sync.WaitGroup
	running.Go(func() {
		<-ctx.Done()
		queue.ShutDown()
	})
	a.strays = queue
	for i := range a.shard.children {
		if !a.shard.kinds.isServed(i) {
			continue // watched once it is (see Start)
		}
		if err := a.watchStrays(ctx, i); err != nil {
			queue.ShutDown()
			return nil, err
		}
	}
	running.Go(func() {
		suspects := map[stray]bool{}
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			switch again, err := a.checkStray(ctx, key, suspects[key]); {
			case err != nil:
				log.FromContext(ctx).V(1).Info("Checking a child's owner failed; retrying", "child", key.NamespacedName, "error", err.Error())
				suspects[key] = true
				queue.AddAfter(key, strayGrace)
			case again:
				suspects[key] = true
				queue.AddAfter(key, strayGrace)
			default:
				delete(suspects, key)
			}
			queue.Done(key)
		}
	})
	return &running, nil
}

// watchStrays hands each child of kind i that this shard's cache receives to the queue
// of releaseStrays.
func (a *assigner) watchStrays(ctx context.Context, i int) error {
	enqueue := func(obj any) {
		if o, ok := unwrap(obj); ok {
			if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == a.objectGVK.Kind {
				a.strays.Add(stray{kind: i, NamespacedName: client.ObjectKeyFromObject(o)})
			}
		}
	}
	// The manager's own informer of the kind, typed as the operator's controllers have
	// it: a metadata-only request would start a second informer.
	return watch(ctx, a.mgr.GetCache(), a.shard.children[i], toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) },
	})
}

// checkStray looks at the owner of the child key names in this shard's cache, and lets
// the child go when the owner is another shard's, or none's. It reports whether to look
// again later: the owner is not in the cache (yet) or is draining. suspect says it has
// looked before: an owner still missing from the cache is then read from the API server.
func (a *assigner) checkStray(ctx context.Context, key stray, suspect bool) (bool, error) {
	if !a.shard.kinds.isServed(key.kind) {
		return false, nil // its CRD went, and its objects with it
	}
	c := a.mgr.GetCache()
	child := reflect.New(reflect.TypeOf(a.shard.children[key.kind]).Elem()).Interface().(client.Object)
	if err := c.Get(ctx, key.NamespacedName, child); err != nil {
		return false, client.IgnoreNotFound(err) // gone, or no longer this shard's
	}
	if child.GetLabels()[a.shard.shardLabel] != a.shard.opts.Name {
		return false, nil
	}
	ref := metav1.GetControllerOf(child)
	if ref == nil || ref.Kind != a.objectGVK.Kind {
		return false, nil
	}
	ownerKey := types.NamespacedName{Namespace: child.GetNamespace(), Name: ref.Name}
	owner := reflect.New(a.shard.objectType.Elem()).Interface().(client.Object)
	err := c.Get(ctx, ownerKey, owner)
	switch {
	case err == nil && owner.GetUID() == ref.UID:
		// This shard's: its own, or one it is letting go, whose drain lets the child go
		// too unless the child came in after the drain looked; so look again then.
		_, draining := owner.GetLabels()[a.shard.drainLabel]
		return draining, nil
	case err != nil && !apierrors.IsNotFound(err):
		return false, err
	case !suspect:
		return true, nil // the owner may yet come: children move first
	}
	// Not in the cache for a while: ask the API server.
	live := metadataOf(a.objectGVK)
	if err := a.writer.Get(ctx, ownerKey, live); err != nil {
		return false, client.IgnoreNotFound(err) // gone: the garbage collector takes the child
	}
	if live.GetUID() != ref.UID || live.GetLabels()[a.shard.shardLabel] == a.shard.opts.Name {
		return false, nil // not its owner; or this shard's, and the cache has yet to show it
	}
	meta := metadataOf(schema.GroupVersionKind{})
	gvk, err := apiutil.GVKForObject(child, a.mgr.GetScheme())
	if err != nil {
		return false, err
	}
	meta.SetGroupVersionKind(gvk)
	meta.SetNamespace(child.GetNamespace())
	meta.SetName(child.GetName())
	// Guarded: a child relabelled meanwhile comes back through the watch.
	meta.SetResourceVersion(child.GetResourceVersion())
	switch err := a.patchLabels(ctx, meta, map[string]any{a.shard.shardLabel: nil}); {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	a.released.Add(1)
	log.FromContext(ctx).Info("Let go of a child whose owner is not this shard's", "child", key.NamespacedName, "kind", gvk.Kind,
		"owner", ownerKey, "ownerShard", live.GetLabels()[a.shard.shardLabel], "shard", a.shard.opts.Name)
	return false, nil
}
