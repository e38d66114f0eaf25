package reconcile

import (
	"context"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// ReadinessPriority is the priority at which Coalesce queues the owner of a child whose
// readiness changed, on a priority queue (controller-runtime's default): above the 0 that
// events are queued at by default, a new object's first among them. Served first in,
// first out, a burst of new objects would put each owner's last reconcile, the one that
// reports it Ready, behind the first reconcile of every object created after it, so that
// no object would be Ready before the whole burst had been started. controller-runtime
// requeues an owner at the priority it was served with, so a wait that reconcile asks
// for (read-your-own-writes, paced progress) keeps it.
const ReadinessPriority = 10

// CoalesceDelay is a delay for Coalesce that merges the status updates of a rollout that
// goes well, yet shows a person a change within about a second.
const CoalesceDelay = time.Second

// Coalesce returns an event handler that asks for the reconciles h asks for, delay later.
// Every event for the same object within the delay makes one reconcile, not one each: a
// Deployment's rollout updates its status several times in a second, and each reconcile
// could write the owner's status once more. An update that changes the object's readiness
// goes through at once, since the owner's status changes with it (a Deployment whose
// rollout completes or that becomes available or unavailable, a pod whose phase or Ready
// condition changes): a rollout that goes well ends in a reconcile without delay, queued
// at ReadinessPriority, ahead of reconciles of objects not yet started. A deletion waits
// the delay: when the garbage collector deletes the children of a deleted owner, the
// owner's own deletion then mostly reaches the cache first (EnqueueOwner makes sure of it,
// see there).
//
// Wrap the handlers of owned objects (EnqueueOwner does, for their controlling owner), not
// the handler of the reconciled type itself, whose changes should be acted on at once.
func Coalesce(h handler.EventHandler, delay time.Duration) handler.EventHandler {
	return coalesced{h: h, delay: delay}
}

// EnqueueOwner is the event handler for the children of owner's type, in place of Owns:
// a child's events ask for a reconcile of its controlling owner, coalesced over
// CoalesceDelay. c is the manager.
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Memcached{}).
//		Watches(&appsv1.Deployment{}, reconcile.EnqueueOwner(mgr, &v1alpha1.Memcached{}))
//
// A child's deletion also tells the shell to read the owner fresh before reconciling it:
// when the garbage collector deletes the children of a deleted owner, the owner may still
// be in the cache, and its child must not be created again.
func EnqueueOwner(c cluster.Cluster, owner client.Object) handler.EventHandler {
	h := handler.EnqueueRequestForOwner(c.GetScheme(), c.GetRESTMapper(), owner, handler.OnlyControllerOwner())
	return Coalesce(bereaving{h, reflect.TypeOf(owner)}, CoalesceDelay)
}

type coalesced struct {
	h     handler.EventHandler
	delay time.Duration
}

func (c coalesced) Create(ctx context.Context, e event.CreateEvent, q queue) {
	c.h.Create(ctx, e, delayed{q, c.delay})
}

func (c coalesced) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	if readinessChanged(e.ObjectOld, e.ObjectNew) {
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

// bereaving notes in bereaved, as owner's type, every object its handler asks to
// reconcile for a deleted child.
type bereaving struct {
	handler.EventHandler
	owner reflect.Type
}

func (b bereaving) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	b.EventHandler.Delete(ctx, e, noting{q, b.owner})
}

// noting notes each request's object in bereaved before queueing it.
type noting struct {
	queue
	owner reflect.Type
}

func (n noting) Add(r rtreconcile.Request) {
	bereaved.note(n.owner, r.NamespacedName)
	n.queue.Add(r)
}

// ahead queues every Add at ReadinessPriority when the queue is a priority queue, and
// as it comes otherwise.
type ahead struct{ queue }

func (a ahead) Add(r rtreconcile.Request) {
	if pq, ok := a.queue.(priorityqueue.PriorityQueue[rtreconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(ReadinessPriority)}, r)
		return
	}
	a.queue.Add(r)
}

// readinessChanged reports whether an update changed what an owner reports of the object:
// a Deployment's rollout state or availability, a pod's phase or readiness. Other types'
// updates are coalesced.
func readinessChanged(old, updated client.Object) bool {
	switch n := updated.(type) {
	case *appsv1.Deployment:
		o, ok := old.(*appsv1.Deployment)
		if !ok {
			return true
		}
		a, b := ownership.DeploymentReadiness(o), ownership.DeploymentReadiness(n)
		return a.Rollout != b.Rollout || a.Available != b.Available
	case *corev1.Pod:
		o, ok := old.(*corev1.Pod)
		return !ok || o.Status.Phase != n.Status.Phase || podReady(o) != podReady(n)
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
