package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

func TestCoalesceMakesOneReconcileOfABurstAfterTheDelay(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[rtreconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[rtreconcile.Request]{Clock: clock})
	defer q.ShutDown()
	owner := rtreconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "owner"}}
	toOwner := crhandler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []rtreconcile.Request {
		return []rtreconcile.Request{owner}
	})
	h := reconcile.Coalesce(toOwner, time.Second)

	child := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child"}}
	ctx := t.Context()
	h.Create(ctx, event.CreateEvent{Object: child}, q)
	clock.Step(500 * time.Millisecond)
	h.Update(ctx, event.UpdateEvent{ObjectOld: child, ObjectNew: child}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: child, ObjectNew: child}, q)
	h.Generic(ctx, event.GenericEvent{Object: child}, q)
	if q.Len() != 0 {
		t.Fatalf("%d reconciles queued before the delay passed, want none", q.Len())
	}

	clock.Step(500 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if q.Len() != 1 {
		t.Fatalf("%d reconciles queued once the delay passed since the first event, want 1", q.Len())
	}
	if got, _ := q.Get(); got != owner {
		t.Errorf("queued %v, want %v", got, owner)
	}
	q.Done(owner)

	clock.Step(time.Second)
	h.Delete(ctx, event.DeleteEvent{Object: child}, q)
	if q.Len() != 0 {
		t.Errorf("a delete was queued at once, want after the delay")
	}
}
