package sharding

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// workers is how many objects the assigner labels at a time.
const workers = 16

// The assigner's own client-side rate limit: a shard's share moves with two patches an
// object, and controller-runtime's default of 20 requests a second would make moving a
// thousand objects take over a minute. The API server's priority and fairness still
// protects it.
const (
	writeQPS   = 200
	writeBurst = 400
)

// assigner labels every object, and its children, for the shard the ring of live shards
// gives it. It runs on the leader only, with a cache of its own that holds the metadata of
// every object and child (the manager's holds its shard's only) and the ring's Leases.
type assigner struct {
	shard  *Shard
	mgr    manager.Manager
	writer client.Client // uncached: the assigner's writes need no cache of their own

	mu   sync.Mutex
	ring *Ring
	live map[string]bool
}

func newAssigner(s *Shard, mgr manager.Manager) *assigner {
	return &assigner{shard: s, mgr: mgr, ring: NewRing(), live: map[string]bool{}}
}

// NeedLeaderElection makes the assigner run on the leader only.
func (a *assigner) NeedLeaderElection() bool { return true }

// Start assigns until ctx is done.
func (a *assigner) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("sharding").WithValues("ring", a.shard.opts.Ring)
	ctx = log.IntoContext(ctx, logger)
	scheme := a.mgr.GetScheme()
	cfg := rest.CopyConfig(a.mgr.GetConfig())
	cfg.QPS, cfg.Burst = max(cfg.QPS, writeQPS), max(cfg.Burst, writeBurst)
	writer, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: a.mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	a.writer = writer

	objectGVK, err := apiutil.GVKForObject(a.shard.opts.Object, scheme)
	if err != nil {
		return err
	}
	byObject := map[client.Object]cache.ByObject{
		&coordinationv1.Lease{}: {
			Namespaces: map[string]cache.Config{a.shard.opts.Namespace: {}},
			Label:      labels.SelectorFromSet(labels.Set{LabelRing: a.shard.opts.Ring}),
		},
	}
	owners := metadataOf(objectGVK)
	byObject[owners] = cache.ByObject{Label: a.shard.childSelectors[reflect.TypeOf(a.shard.opts.Object)]}
	var children []*metav1.PartialObjectMetadata
	for _, child := range a.shard.opts.Children {
		gvk, err := apiutil.GVKForObject(child, scheme)
		if err != nil {
			return err
		}
		meta := metadataOf(gvk)
		children = append(children, meta)
		byObject[meta] = cache.ByObject{Label: a.shard.childSelectors[reflect.TypeOf(child)]}
	}
	c, err := cache.New(a.mgr.GetConfig(), cache.Options{
		Scheme: scheme, Mapper: a.mgr.GetRESTMapper(), ByObject: byObject,
		DefaultNamespaces: a.shard.defaultNamespaces,
		// Labels and owner references are all it reads: managedFields, the bulk of an
		// object's metadata, would double what the leader caches.
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return err
	}

	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "sharding-" + a.shard.opts.Ring})
	defer queue.ShutDown()
	enqueue := func(obj any) {
		if o, ok := unwrap(obj); ok {
			queue.Add(client.ObjectKeyFromObject(o))
		}
	}
	if err := a.watch(ctx, c, owners, toolscache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }}); err != nil {
		return err
	}
	for _, child := range children {
		if err := c.IndexField(ctx, child, controllerIndex, controllerUID); err != nil {
			return err
		}
		// A child labelled other than its owner (created before sharding was on, or while
		// its owner moved) brings the owner back.
		toOwner := func(obj any) {
			o, ok := unwrap(obj)
			ref := metav1.GetControllerOf(o)
			if !ok || ref == nil || ref.Kind != objectGVK.Kind {
				return
			}
			queue.Add(types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name})
		}
		if err := a.watch(ctx, c, child, toolscache.ResourceEventHandlerFuncs{AddFunc: toOwner, UpdateFunc: func(_, o any) { toOwner(o) }}); err != nil {
			return err
		}
	}
	membership := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case membership <- struct{}{}:
		default:
		}
	}
	if err := a.watch(ctx, c, &coordinationv1.Lease{}, toolscache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke,
	}); err != nil {
		return err
	}

	cacheDone := make(chan error, 1)
	go func() { cacheDone <- c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return <-cacheDone
	}
	logger.Info("Assigning objects to shards")

	var wg sync.WaitGroup
	defer wg.Wait()
	defer queue.ShutDown()
	for range workers {
		wg.Go(func() {
			for a.next(ctx, c, queue, objectGVK, children) {
			}
		})
	}

	// Membership: recomputed on every change of a Lease, and when the first live Lease
	// would expire unless renewed; every object is looked at again when it changes.
	expiry := time.NewTimer(time.Hour)
	defer expiry.Stop()
	poke(nil)
	for {
		select {
		case <-ctx.Done():
			return <-cacheDone
		case <-membership:
		case <-expiry.C:
		}
		next, changed, shards, err := a.recompute(ctx, c)
		if err != nil {
			return err
		}
		if changed {
			logger.Info("Shards changed", "live", shards)
			var list metav1.PartialObjectMetadataList
			list.SetGroupVersionKind(objectGVK.GroupVersion().WithKind(objectGVK.Kind + "List"))
			if err := c.List(ctx, &list); err != nil {
				return err
			}
			for _, o := range list.Items {
				queue.Add(client.ObjectKeyFromObject(&o))
			}
		}
		expiry.Reset(next)
	}
}

// watch adds handler to the informer of obj's kind in c.
func (a *assigner) watch(ctx context.Context, c cache.Cache, obj client.Object, handler toolscache.ResourceEventHandler) error {
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(handler)
	return err
}

// recompute takes the live shards from the Leases, and returns how long until it must
// look again, whether they changed, and which they are.
func (a *assigner) recompute(ctx context.Context, c cache.Cache) (time.Duration, bool, []string, error) {
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases); err != nil {
		return 0, false, nil, err
	}
	now := time.Now()
	shards, expiry := Live(leases.Items, now)
	next := time.Hour
	if !expiry.IsZero() {
		// Just past the expiry, so that a renewal in time is seen first.
		next = expiry.Sub(now) + 100*time.Millisecond
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	old := make([]string, 0, len(a.live))
	for s := range a.live {
		old = append(old, s)
	}
	slices.Sort(old)
	if slices.Equal(old, shards) {
		return next, false, shards, nil
	}
	a.ring = NewRing(shards...)
	a.live = make(map[string]bool, len(shards))
	for _, s := range shards {
		a.live[s] = true
	}
	return next, true, shards, nil
}

// next handles one object from the queue; it returns false once the queue is shut down.
func (a *assigner) next(ctx context.Context, c cache.Cache, queue workqueue.TypedRateLimitingInterface[types.NamespacedName], gvk schema.GroupVersionKind, children []*metav1.PartialObjectMetadata) bool {
	key, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(key)
	if err := a.assign(ctx, c, key, gvk, children); err != nil {
		log.FromContext(ctx).V(1).Info("Assignment failed; retrying", "object", key, "error", err.Error())
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

// assign takes the step Decide gives for the object key names.
func (a *assigner) assign(ctx context.Context, c cache.Cache, key types.NamespacedName, gvk schema.GroupVersionKind, children []*metav1.PartialObjectMetadata) error {
	obj := metadataOf(gvk)
	if err := c.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	a.mu.Lock()
	want := a.ring.Shard(Key(gvk.Group, gvk.Kind, key.Namespace, key.Name))
	live := a.live
	a.mu.Unlock()

	shardLabel, drainLabel := a.shard.shardLabel, a.shard.drainLabel
	current := obj.GetLabels()[shardLabel]
	_, draining := obj.GetLabels()[drainLabel]
	switch Decide(current, draining, want, func(s string) bool { return live[s] }) {
	case Keep:
		if current == want && !draining {
			return a.labelChildren(ctx, c, obj, want, children)
		}
		return nil
	case Drain:
		return a.patchLabels(ctx, obj, map[string]any{drainLabel: "true"})
	default: // Assign
		// Children first: the new shard finds them in its cache when it first sees the
		// object.
		if err := a.labelChildren(ctx, c, obj, want, children); err != nil {
			return err
		}
		return a.patchLabels(ctx, obj, map[string]any{shardLabel: want, drainLabel: nil})
	}
}

// labelChildren labels the children of owner for shard.
func (a *assigner) labelChildren(ctx context.Context, c cache.Cache, owner client.Object, shard string, children []*metav1.PartialObjectMetadata) error {
	for _, kind := range children {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(kind.GroupVersionKind().GroupVersion().WithKind(kind.Kind + "List"))
		if err := c.List(ctx, &list, client.InNamespace(owner.GetNamespace()), client.MatchingFields{controllerIndex: string(owner.GetUID())}); err != nil {
			return err
		}
		for i := range list.Items {
			child := &list.Items[i]
			if child.GetLabels()[a.shard.shardLabel] == shard {
				continue
			}
			child.SetGroupVersionKind(kind.GroupVersionKind())
			if err := client.IgnoreNotFound(a.patchLabels(ctx, child, map[string]any{a.shard.shardLabel: shard})); err != nil {
				return err
			}
		}
	}
	return nil
}

// patchLabels sets labels (nil removes one) on obj with a merge patch guarded by its
// resourceVersion: the decision was taken on that version.
func (a *assigner) patchLabels(ctx context.Context, obj *metav1.PartialObjectMetadata, labels map[string]any) error {
	patch := map[string]any{"metadata": map[string]any{"labels": labels, "resourceVersion": obj.GetResourceVersion()}}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := a.writer.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("labelling %s %s/%s: %w", obj.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// metadataOf returns an empty metadata-only object of kind gvk.
func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
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
