package reconcile

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/readiness"
)

// readinessPriority is the priority at which a coalesced handler queues the owner of a
// child whose readiness changed, on a priority queue (controller-runtime's default): above
// the 0 that events are queued at by default, a new object's first among them. Served first
// in, first out, a burst of new objects would put each owner's last reconcile, the one that
// reports it Ready, behind the first reconcile of every object created after it, so that no
// object would be Ready before the whole burst had been started. controller-runtime requeues
// an owner at the priority it was served with, so a wait that reconcile asks for
// (read-your-own-writes, paced progress) keeps it.
const readinessPriority = 10

// coalesceDelay merges the status updates of a rollout that goes well, yet shows a person a
// change within about a second.
const coalesceDelay = time.Second

// coalesce returns an event handler that asks for the reconciles h asks for, delay later.
// Every event for the same object within the delay makes one reconcile, not one each: a
// Deployment's rollout updates its status several times in a second, and each reconcile
// could write the owner's status once more. An update that changes the object's readiness
// (readiness.Changed) goes through at once, since the owner's status changes with
// it: a rollout that goes well ends in a reconcile without delay, queued at
// readinessPriority, ahead of reconciles of objects not yet started. A deletion waits the
// delay: when the garbage collector deletes the children of a deleted owner, the owner's own
// deletion then mostly reaches the cache first (enqueueOwner makes sure of it, see there).
//
// It wraps the handlers of children and watched kinds, not the handler of the reconciled
// kind itself, whose changes should be acted on at once.
func coalesce(h handler.EventHandler, delay time.Duration) handler.EventHandler {
	return coalesced{h: h, delay: delay}
}

// enqueueOwner is the event handler of the child kind of child: a child's events ask for a
// reconcile of its controlling owner, of owner's kind, coalesced. A child's deletion also
// tells the shell to read the owner fresh before reconciling it: when the garbage collector
// deletes the children of a deleted owner, the owner may still be in the cache, and its
// child must not be created again. Each event first clears the owner's wait for the cache
// to show its own write of the child (children.go), since the cache holds the event's
// object by then; of a kind declared by WithStatusIgnored, an update that changes only the
// child's status goes no further.
func (r *shell[T]) enqueueOwner(c cluster.Cluster, owner, child client.Object) handler.EventHandler {
	var h handler.EventHandler = handler.EnqueueRequestForOwner(c.GetScheme(), c.GetRESTMapper(), owner, handler.OnlyControllerOwner())
	gvk, _ := apiutil.GVKForObject(child, c.GetScheme()) // checked when the shell was made
	h = coalesce(bereaving{h, r.bereaved}, coalesceDelay)
	if r.options.ignoresStatus(child) {
		h = ignoringStatus{h}
	}
	return clearing{h, gvk, r.children}
}

type coalesced struct {
	h     handler.EventHandler
	delay time.Duration
}

func (c coalesced) Create(ctx context.Context, e event.CreateEvent, q queue) {
	c.h.Create(ctx, e, delayed{q, c.delay})
}

func (c coalesced) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	if readiness.Changed(e.ObjectOld, e.ObjectNew) {
		c.h.Update(ctx, e, ahead{q})
		return
	}
	c.h.Update(ctx, e, delayed{q, c.delay})
}

func (c coalesced) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	c.h.Delete(ctx, e, delayed{q, c.delay})
}

func (c coalesced) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	c.h.Generic(ctx, e, delayed{q, c.delay})
}

type queue = workqueue.TypedRateLimitingInterface[rtreconcile.Request]

// delayed turns every Add into an AddAfter. The queue keeps a waiting request's earliest
// time, so later events for it are absorbed rather than postponing it.
type delayed struct {
	queue
	delay time.Duration
}

func (d delayed) Add(r rtreconcile.Request) { d.AddAfter(r, d.delay) }

// bereaving notes in owners every object its handler asks to reconcile for a deleted child.
type bereaving struct {
	handler.EventHandler
	owners *ownerSet
}

func (b bereaving) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	b.EventHandler.Delete(ctx, e, noting{q, b.owners})
}

// noting notes each request's object in owners before queueing it.
type noting struct {
	queue
	owners *ownerSet
}

func (n noting) Add(r rtreconcile.Request) {
	n.owners.note(r.NamespacedName)
	n.queue.Add(r)
}

// ahead queues every Add at readinessPriority when the queue is a priority queue, and
// as it comes otherwise.
type ahead struct{ queue }

func (a ahead) Add(r rtreconcile.Request) {
	if pq, ok := a.queue.(priorityqueue.PriorityQueue[rtreconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(readinessPriority)}, r)
		return
	}
	a.queue.Add(r)
}
