package reconcile

// This file is the shell's part "the memory of the logic's writes of children"
// (docs/architecture.md, the shell's parts): children, and notingClient, the layer of the
// Writer's client that feeds it.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

// childKey names a child: its kind and its namespaced name.
type childKey struct {
	gvk schema.GroupVersionKind
	types.NamespacedName
}

// childWrite is a write of a child the logic made, as the API server answered it: the
// resourceVersion it left the child at, or its deletion.
type childWrite struct {
	childKey
	rv      string
	uid     types.UID // the child's, when the write's answer or the logic's object gave it
	deleted bool
}

// children is read-your-own-writes for the children of the shell's objects. A reconcile
// that ran on a cache which has not yet seen the child the previous reconcile of the same
// object created, changed or deleted would decide from that stale child: create it again
// (AlreadyExists), patch from an old copy (a conflict), report a rollout the write has
// already moved on. So the shell remembers each child write, by its owner, and puts the
// owner's next reconcile off until the cache shows every one of them, the watch of the
// child clearing it (the child's event reconciles the owner again), or until the
// expectation timeout (WithExpectationTimeout), so that a lost event holds nothing forever.
type children struct {
	mu      sync.Mutex
	pending map[types.NamespacedName]map[childKey]pendingWrite // by owner
	owners  map[childKey]types.NamespacedName                  // the owner of each pending write
}

type pendingWrite struct {
	childWrite
	at time.Time
}

func newChildren() *children {
	return &children{pending: map[types.NamespacedName]map[childKey]pendingWrite{}, owners: map[childKey]types.NamespacedName{}}
}

// wrote records owner's reconcile's writes of children, done at now; a later write of a
// child replaces an earlier one.
func (c *children) wrote(owner types.NamespacedName, writes []childWrite, now time.Time) {
	if len(writes) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[owner]
	if p == nil {
		p = map[childKey]pendingWrite{}
		c.pending[owner] = p
	}
	for _, w := range writes {
		if previous, ok := c.owners[w.childKey]; ok && previous != owner {
			c.dropLocked(previous, w.childKey)
		}
		p[w.childKey] = pendingWrite{childWrite: w, at: now}
		c.owners[w.childKey] = owner
	}
}

// seen clears the pending write of the child of kind gvk that the cache now holds as obj,
// or has just dropped (gone), when that shows the write.
func (c *children) seen(gvk schema.GroupVersionKind, obj client.Object, gone bool) {
	key := childKey{gvk, client.ObjectKeyFromObject(obj)}
	c.mu.Lock()
	defer c.mu.Unlock()
	owner, ok := c.owners[key]
	if !ok {
		return
	}
	w := c.pending[owner][key].childWrite
	// A deletion after the write shows it too: waiting would only delay the owner's
	// repair. The deletion of an earlier child of the name does not.
	if gone && (w.deleted || w.uid == "" || obj.GetUID() == w.uid) || !gone && w.shownBy(obj) {
		c.dropLocked(owner, key)
	}
}

// behind reports whether the cache, read through r, has yet to show a child write of
// owner's last reconciles, and if so how long to wait for it at most. A write the cache
// shows, or older than timeout, is forgotten.
func (c *children) behind(ctx context.Context, r client.Reader, newObject func(schema.GroupVersionKind) (client.Object, error), owner types.NamespacedName, now time.Time, timeout time.Duration) (time.Duration, bool) {
	c.mu.Lock()
	pending := make([]pendingWrite, 0, len(c.pending[owner]))
	for _, w := range c.pending[owner] {
		pending = append(pending, w)
	}
	c.mu.Unlock()

	var longest time.Duration
	for _, w := range pending {
		wait := timeout - now.Sub(w.at)
		if wait > 0 && !c.cached(ctx, r, newObject, w.childWrite) {
			longest = max(longest, wait)
			continue
		}
		c.mu.Lock()
		if c.pending[owner][w.childKey] == w {
			c.dropLocked(owner, w.childKey)
		}
		c.mu.Unlock()
	}
	return longest, longest > 0
}

// cached reports whether the cache shows w: the watch event that would clear it may have
// come before the write was recorded. A child the cache cannot be asked about counts as
// shown, so that nothing waits on a read that cannot answer: r refuses, without a request,
// a kind declared optional whose CRD is gone, whose informer must not be started again.
func (c *children) cached(ctx context.Context, r client.Reader, newObject func(schema.GroupVersionKind) (client.Object, error), w childWrite) bool {
	obj, err := newObject(w.gvk)
	if err != nil {
		return true
	}
	switch err := r.Get(ctx, w.NamespacedName, obj); {
	case apierrors.IsNotFound(err):
		return w.deleted // a child just created or changed is missing from a cache behind
	case err != nil:
		return true
	}
	return w.shownBy(obj)
}

// forget drops every pending write of owner's children: owner is gone.
func (c *children) forget(owner types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.pending[owner] {
		delete(c.owners, key)
	}
	delete(c.pending, owner)
}

func (c *children) dropLocked(owner types.NamespacedName, key childKey) {
	delete(c.pending[owner], key)
	if len(c.pending[owner]) == 0 {
		delete(c.pending, owner)
	}
	delete(c.owners, key)
}

// shownBy reports whether a cache that holds obj shows w: a deletion as the child being
// deleted or replaced by another of the name, a create or change as the child at w's
// resourceVersion or later. A resourceVersion that is not an ordered number (an aggregated
// API may serve such) cannot be compared and counts as shown.
func (w childWrite) shownBy(obj client.Object) bool {
	if w.deleted {
		return obj.GetDeletionTimestamp() != nil || (w.uid != "" && obj.GetUID() != w.uid)
	}
	cmp, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), w.rv)
	return err != nil || cmp >= 0
}

// clearing is a child kind's event handler that, before h, tells children what the cache
// now holds of the child.
type clearing struct {
	handler.EventHandler
	gvk      schema.GroupVersionKind
	children *children
}

func (c clearing) Create(ctx context.Context, e event.CreateEvent, q queue) {
	c.children.seen(c.gvk, e.Object, false)
	c.EventHandler.Create(ctx, e, q)
}

func (c clearing) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	c.children.seen(c.gvk, e.ObjectNew, false)
	c.EventHandler.Update(ctx, e, q)
}

func (c clearing) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	c.children.seen(c.gvk, e.Object, true)
	c.EventHandler.Delete(ctx, e, q)
}

// newChild returns an empty object of a child kind, to read it from the cache into.
func (r *shell[T]) newChild(gvk schema.GroupVersionKind) (client.Object, error) {
	o, err := r.client.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	obj, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("reconcile: %s is not an object", gvk)
	}
	return obj, nil
}

// notingClient returns the layer of the Writer's client over c that notes each accepted
// write of a child (a kind the controller owns, of owns) in wrote, for read-your-own-writes:
// a create, update, patch, apply or delete, and a write of a child's status, which moves
// its resourceVersion on too. It is an interceptor client, which has every method of
// client.Client, so that a write method it does not list passes through, and one listed
// here cannot be lost to an embedding that forgot it (Ensure applies its children).
func notingClient(c client.Client, owns []schema.GroupVersionKind, wrote *[]childWrite) client.Client {
	// note records an accepted write of obj, when it is a child.
	note := func(obj client.Object, deleted bool) {
		if wrote == nil {
			return
		}
		gvk, err := apiutil.GVKForObject(obj, c.Scheme())
		if err != nil || !slices.Contains(owns, gvk) {
			return
		}
		*wrote = append(*wrote, childWrite{childKey: childKey{gvk, client.ObjectKeyFromObject(obj)},
			rv: obj.GetResourceVersion(), uid: obj.GetUID(), deleted: deleted})
	}
	// noted notes obj once send has been accepted.
	noted := func(obj client.Object, deleted bool, err error) error {
		if err == nil {
			note(obj, deleted)
		}
		return err
	}
	return interceptor.NewClient(withWatch(c), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return noted(obj, false, c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return noted(obj, false, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return noted(obj, false, c.Patch(ctx, obj, patch, opts...))
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			err := c.Apply(ctx, obj, opts...)
			// An apply configuration that is an object (client.ApplyConfigurationFromUnstructured,
			// as Ensure sends) holds the answer, resourceVersion and all; a typed one does
			// not say which resourceVersion it left the child at, and waits for nothing.
			if o, ok := obj.(client.Object); ok {
				return noted(o, false, err)
			}
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return noted(obj, true, c.Delete(ctx, obj, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return noted(obj, false, subResourceWriter(c, sub).Update(ctx, obj, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return noted(obj, false, subResourceWriter(c, sub).Patch(ctx, obj, patch, opts...))
		},
		// The other subresource writes go through subResourceWriter, as the shell's own
		// client layers (metrics, tracing) wrap its Status().
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return subResourceWriter(c, sub).Create(ctx, obj, subObj, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			return subResourceWriter(c, sub).Apply(ctx, obj, opts...)
		},
	})
}
