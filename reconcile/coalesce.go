package reconcile

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// CoalesceDelay is a delay for Coalesce that merges the status updates of a rollout that
// goes well, yet shows a person a change within about a second.
const CoalesceDelay = time.Second

// Coalesce returns an event handler that asks for the reconciles h asks for, delay later.
// Every event for the same object within the delay makes one reconcile, not one each: a
// Deployment's rollout updates its status several times in a second, and each reconcile
// could write the owner's status once more.
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
func EnqueueOwner(c cluster.Cluster, owner client.Object) handler.EventHandler {
	return Coalesce(handler.EnqueueRequestForOwner(c.GetScheme(), c.GetRESTMapper(), owner, handler.OnlyControllerOwner()), CoalesceDelay)
}

type coalesced struct {
	h     handler.EventHandler
	delay time.Duration
}

func (c coalesced) Create(ctx context.Context, e event.CreateEvent, q queue) {
	c.h.Create(ctx, e, delayed{q, c.delay})
}

func (c coalesced) Update(ctx context.Context, e event.UpdateEvent, q queue) {
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
