package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"k8s.io/client-go/discovery"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// The lease timing controller-runtime's leader election uses unless told otherwise, and so
// a shard's unless its manager's options say otherwise.
const (
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRetryPeriod   = 2 * time.Second
)

// Options describe a shard: the ring it belongs to, its name, and what it shards.
type Options struct {
	// Ring names the ring, one for each kind an operator reconciles: its shard and drain
	// labels, and the label on its Leases.
	Ring string
	// Name is this replica's shard name, the name and holder of its Lease. It must be
	// unique among the ring's live replicas and stable across a restart of one (a pod's
	// name); a replica that restarts under its name takes its own Lease back at once.
	Name string
	// Namespace holds the shards' Leases; the manager's LeaderElectionNamespace if empty.
	Namespace string
	// Controller is the declaration of the controller whose objects the ring shards: its
	// kind, and the children it declares (reconcile.WithChildren), which follow their
	// owner's shard (ownership.Ensure labels them as their owner).
	Controller reconcile.Declaration
}

// Shard makes one replica of an operator a shard of its ring. Build it with New, pass the
// manager's declaration through Configure, and run the manager with Run.
type Shard struct {
	opts                                      Options
	object                                    client.Object
	children                                  []client.Object
	leaseDuration, renewDeadline, retryPeriod time.Duration
	childSelectors                            map[reflect.Type]labels.Selector // the manager's own, before sharding
	client                                    client.Client                    // the manager's, once Run has it
	objectType                                reflect.Type
	shardLabel, drainLabel                    string
	defaultNamespaces                         map[string]cache.Config
	kinds                                     *childKinds // which children are served, once Run has the manager
}

// New returns the shard opts describe, or an error naming what is missing.
func New(opts Options) (*Shard, error) {
	var missing []error
	if opts.Ring == "" {
		missing = append(missing, errors.New("a ring name"))
	}
	if opts.Name == "" {
		missing = append(missing, errors.New("a shard name"))
	}
	if opts.Controller == nil {
		missing = append(missing, errors.New("the declaration of the controller whose objects it shards"))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("sharding: a shard needs %w", errors.Join(missing...))
	}
	var invalid []string
	if opts.Ring != "" {
		invalid = append(invalid, validation.IsQualifiedName(LabelShard(opts.Ring))...)
	}
	if opts.Name != "" {
		// The Lease's name, and a label value.
		invalid = append(invalid, validation.IsDNS1123Subdomain(opts.Name)...)
		invalid = append(invalid, validation.IsValidLabelValue(opts.Name)...)
	}
	if len(invalid) > 0 {
		return nil, fmt.Errorf("sharding: ring %q, shard %q: %s", opts.Ring, opts.Name, strings.Join(invalid, "; "))
	}
	object := opts.Controller.Object()
	return &Shard{
		opts:       opts,
		object:     object,
		children:   opts.Controller.Children(),
		objectType: reflect.TypeOf(object),
		shardLabel: LabelShard(opts.Ring),
		drainLabel: LabelDrain(opts.Ring),
	}, nil
}

// Configure changes the manager to be made for sharding:
//   - its cache holds only the objects and children labelled for this shard, in addition
//     to any selector its options already have;
//   - every controller runs on every replica, not only on a leader: sharding needs no
//     leader election (the first live shard assigns), and leaves it as the options say;
//   - its shells reconcile only what is this shard's (the shard is the manager's Gate).
//
// The shard's Leases use the manager's lease timing. Call it before m.New.
func (s *Shard) Configure(m *reconcile.Manager) {
	o := &m.Options
	if s.opts.Namespace == "" {
		s.opts.Namespace = o.LeaderElectionNamespace
	}
	s.leaseDuration = valueOr(o.LeaseDuration, defaultLeaseDuration)
	s.renewDeadline = valueOr(o.RenewDeadline, defaultRenewDeadline)
	s.retryPeriod = valueOr(o.RetryPeriod, defaultRetryPeriod)

	mine, _ := labels.NewRequirement(s.shardLabel, selection.Equals, []string{s.opts.Name})
	if o.Cache.ByObject == nil {
		o.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	s.childSelectors = map[reflect.Type]labels.Selector{}
	for _, kind := range append([]client.Object{s.object}, s.children...) {
		key, by := byObject(o.Cache.ByObject, kind)
		selector := by.Label
		if selector == nil {
			selector = labels.Everything()
		}
		s.childSelectors[reflect.TypeOf(kind)] = selector
		by.Label = selector.DeepCopySelector().Add(*mine)
		o.Cache.ByObject[key] = by
	}
	s.defaultNamespaces = o.Cache.DefaultNamespaces

	o.Controller.NeedLeaderElection = new(false)
	m.Gate = s
}

// byObject returns the key of kind's entry in byObject, kind itself when it has none.
func byObject(byObject map[client.Object]cache.ByObject, kind client.Object) (client.Object, cache.ByObject) {
	for key, by := range byObject {
		if reflect.TypeOf(key) == reflect.TypeOf(kind) {
			return key, by
		}
	}
	return kind, cache.ByObject{}
}

func valueOr(d *time.Duration, fallback time.Duration) time.Duration {
	if d == nil {
		return fallback
	}
	return *d
}

// Run holds this shard's Lease and runs mgr, with the assigner, which acts on the first
// live shard only,
// until ctx is done; then it stops mgr, waits until its reconciles have ended, and only
// then releases the Lease, so that the assigner moves the shard's objects at once and
// none of them is reconciled by two replicas. A shard that cannot renew its Lease stops
// its manager and returns an error: the assigner moves its objects once the Lease expires.
func (s *Shard) Run(ctx context.Context, mgr manager.Manager) error {
	if s.leaseDuration == 0 {
		return errors.New("sharding: Run before Configure: the manager's options were not configured for sharding")
	}
	if s.opts.Namespace == "" {
		return errors.New("sharding: the shard Leases need a namespace: set Options.Namespace or the manager's LeaderElectionNamespace")
	}
	s.client = mgr.GetClient()
	if err := s.followKinds(ctx, mgr); err != nil {
		return err
	}
	if err := mgr.Add(newAssigner(s, mgr)); err != nil {
		return err
	}
	leases, err := coordinationv1client.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	logger := log.FromContext(ctx).WithValues("ring", s.opts.Ring, "shard", s.opts.Name)

	managerCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	held := make(chan struct{})
	lock := &keepableLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: s.opts.Namespace, Name: s.opts.Name},
		Client:     leases,
		LockConfig: resourcelock.ResourceLockConfig{Identity: s.opts.Name},
		Labels:     map[string]string{LabelRing: s.opts.Ring},
	}}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   s.leaseDuration,
		RenewDeadline:   s.renewDeadline,
		RetryPeriod:     s.retryPeriod,
		ReleaseOnCancel: true,
		Name:            s.opts.Ring + "/" + s.opts.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(held) },
			OnStoppedLeading: stopManager, // lost, or released after the manager stopped
		},
	})
	if err != nil {
		return err
	}
	// The Lease outlives ctx until the manager has stopped.
	leaseCtx, releaseLease := context.WithCancel(context.WithoutCancel(ctx))
	released := make(chan struct{})
	go func() {
		defer close(released)
		elector.Run(leaseCtx)
	}()
	defer func() { releaseLease(); <-released }()

	select {
	case <-held:
	case <-ctx.Done():
		return nil
	}
	logger.Info("Holding the shard Lease")
	err = mgr.Start(managerCtx)
	if err != nil {
		// The manager failed, or lost the leader election: controller-runtime then skips
		// the graceful shutdown, and reconciles may still be running. The Lease is left
		// to expire, which gives them the lease duration to end.
		lock.keep.Store(true)
	}
	if ctx.Err() == nil && managerCtx.Err() != nil && err == nil {
		err = fmt.Errorf("sharding: shard %s lost its Lease", s.opts.Name)
	}
	return err
}

// followKinds finds which child kinds the API server serves now; the assigner then
// follows the optional ones (see childKinds).
func (s *Shard) followKinds(ctx context.Context, mgr manager.Manager) error {
	kinds, err := newChildKinds(s.children, s.opts.Controller.Optional(), mgr.GetScheme())
	if err != nil {
		return err
	}
	if kinds.discover, err = discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient()); err != nil {
		return fmt.Errorf("sharding: %w", err)
	}
	if kinds.hasOptional() {
		if _, _, err := kinds.refresh(ctx); err != nil {
			return err
		}
	}
	s.kinds = kinds
	return nil
}

// keepableLock is a Lease lock that can be told to keep the Lease, rather than release
// it, when its elector stops.
type keepableLock struct {
	resourcelock.Interface
	keep atomic.Bool
}

// Update writes the lock's record unless it is to be kept.
func (l *keepableLock) Update(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	if l.keep.Load() {
		return errors.New("sharding: the shard's manager did not stop cleanly; its Lease is left to expire")
	}
	return l.Interface.Update(ctx, record)
}

// Enter lets the shell reconcile an object of the sharded kind only when it is labelled
// for this shard and not draining. A draining object is let go: the shard label of its
// children is removed, then both labels of the object, guarded by its resourceVersion,
// which tells the assigner that it may label it, and them, for another shard. The shell never runs two reconciles of one object at once, so none is
// running here by then. Objects of other kinds are let in as they are.
func (s *Shard) Enter(ctx context.Context, obj client.Object) (map[string]string, bool, error) {
	if reflect.TypeOf(obj) != s.objectType {
		return nil, true, nil
	}
	logger := log.FromContext(ctx)
	current := obj.GetLabels()
	if current[s.shardLabel] != s.opts.Name {
		return nil, false, nil // moved on: a requeue from before
	}
	if _, draining := current[s.drainLabel]; draining {
		if err := s.releaseChildren(ctx, obj); err != nil {
			return nil, false, err
		}
		before := obj.DeepCopyObject().(client.Object)
		kept := make(map[string]string, len(current))
		for k, v := range current {
			if k != s.shardLabel && k != s.drainLabel {
				kept[k] = v
			}
		}
		obj.SetLabels(kept)
		switch err := s.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); {
		case err == nil:
			logger.V(1).Info("Drained", "shard", s.opts.Name)
		case apierrors.IsConflict(err), apierrors.IsNotFound(err):
			// Already let go, or changed since: the newer version brings the object
			// back, if there is one.
		default:
			return nil, false, err
		}
		return nil, false, nil
	}
	logger.V(1).Info("Reconcile started", "shard", s.opts.Name, "time", time.Now().UTC().Format(time.RFC3339Nano))
	return map[string]string{s.shardLabel: s.opts.Name}, true, nil
}

// Leave records the end of a reconcile Enter let in, with the shard and the time, so that
// the reconciles of every replica can be laid side by side.
func (s *Shard) Leave(ctx context.Context, obj client.Object) {
	if reflect.TypeOf(obj) != s.objectType {
		return
	}
	log.FromContext(ctx).V(1).Info("Reconcile finished", "shard", s.opts.Name, "time", time.Now().UTC().Format(time.RFC3339Nano))
}

// releaseChildren removes this shard's label from the children of owner in the cache.
// The shell's read-your-own-writes check has let the reconcile in only once the cache
// holds every child the shard created, so none is left behind.
//
// It finds them among every child in owner's namespace, not through an index by
// controller: a drain is rare, and such an index would cost every shard some 0.7 KiB of
// heap for every child it holds, for good.
func (s *Shard) releaseChildren(ctx context.Context, owner client.Object) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{s.shardLabel: nil}}})
	if err != nil {
		return err
	}
	for i, kind := range s.children {
		if !s.kinds.isServed(i) {
			continue // none exists; and a read of the kind would wait for its CRD for ever
		}
		gvk, err := apiutil.GVKForObject(kind, s.client.Scheme())
		if err != nil {
			return err
		}
		obj, err := s.client.Scheme().New(listOf(gvk))
		if err != nil {
			return err
		}
		list, ok := obj.(client.ObjectList)
		if !ok {
			return fmt.Errorf("sharding: %s is not a list", listOf(gvk))
		}
		// Read without a copy of each: the few that are patched are copied first.
		if err := s.client.List(ctx, list, client.InNamespace(owner.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		err = meta.EachListItem(list, func(o runtime.Object) error {
			child, ok := o.(client.Object)
			if !ok || child.GetLabels()[s.shardLabel] != s.opts.Name {
				return nil
			}
			if ref := metav1.GetControllerOf(child); ref == nil || ref.UID != owner.GetUID() {
				return nil
			}
			child = child.DeepCopyObject().(client.Object)
			return client.IgnoreNotFound(s.client.Patch(ctx, child, client.RawPatch(types.MergePatchType, patch)))
		})
		if err != nil {
			return err
		}
	}
	return nil
}
