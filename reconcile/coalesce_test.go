package reconcile_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
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

}

func TestCoalescePassesAtOnceWhatChangesAnOwnersReport(t *testing.T) {
	owner := rtreconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "owner"}}
	toOwner := crhandler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []rtreconcile.Request {
		return []rtreconcile.Request{owner}
	})
	pod := func(phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child"}, Status: corev1.PodStatus{
			Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	deployment := func(replicas, available int32, availableCondition corev1.ConditionStatus) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child", Generation: 1},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: available, AvailableReplicas: available,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: availableCondition}}}}
	}
	for _, tc := range []struct {
		name     string
		old, new client.Object
		atOnce   bool
	}{
		{"a pod that starts running", pod(corev1.PodPending, corev1.ConditionFalse), pod(corev1.PodRunning, corev1.ConditionFalse), true},
		{"a pod that becomes ready", pod(corev1.PodRunning, corev1.ConditionFalse), pod(corev1.PodRunning, corev1.ConditionTrue), true},
		{"a pod whose readiness is unchanged", pod(corev1.PodRunning, corev1.ConditionTrue), pod(corev1.PodRunning, corev1.ConditionTrue), false},
		{"a Deployment whose rollout completes", deployment(1, 0, corev1.ConditionFalse), deployment(1, 1, corev1.ConditionTrue), true},
		{"a Deployment that counts a replica and is still rolling out", deployment(0, 0, corev1.ConditionFalse), deployment(1, 0, corev1.ConditionFalse), false},
		{"a ConfigMap", &corev1.ConfigMap{}, &corev1.ConfigMap{Data: map[string]string{"a": "b"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[rtreconcile.Request]())
			defer q.ShutDown()
			reconcile.Coalesce(toOwner, time.Hour).Update(t.Context(), event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}, q)
			if got := q.Len() == 1; got != tc.atOnce {
				t.Errorf("queued at once: %v, want %v", got, tc.atOnce)
			}
		})
	}
	// A child deleted by the garbage collector, after its owner, must not reach the owner's
	// reconcile before the owner's own deletion reaches the cache: it would be created again.
	t.Run("a deletion", func(t *testing.T) {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[rtreconcile.Request]())
		defer q.ShutDown()
		reconcile.Coalesce(toOwner, time.Hour).Delete(t.Context(), event.DeleteEvent{Object: pod(corev1.PodRunning, corev1.ConditionTrue)}, q)
		if q.Len() != 0 {
			t.Errorf("a deletion was queued at once, not after the delay")
		}
	})
}

// A burst of new objects must not hold up the report of objects already started: the
// owner of a child that became ready is served before owners queued earlier for their first
// reconcile, and a child's other updates wait their turn.
func TestCoalesceQueuesAReadinessChangeAheadOfObjectsNotYetStarted(t *testing.T) {
	request := func(name string) rtreconcile.Request {
		return rtreconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}}
	}
	toOwner := crhandler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []rtreconcile.Request {
		return []rtreconcile.Request{request(obj.GetLabels()["owner"])}
	})
	deployment := func(owner string, available corev1.ConditionStatus) *appsv1.Deployment {
		ready := int32(0)
		if available == corev1.ConditionTrue {
			ready = 1
		}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: owner, Generation: 1, Labels: map[string]string{"owner": owner}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: ready, AvailableReplicas: ready,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: available}}}}
	}
	for _, tc := range []struct {
		name      string
		old, new  *appsv1.Deployment
		wantFirst string
	}{
		{"a Deployment that became available", deployment("started", corev1.ConditionFalse), deployment("started", corev1.ConditionTrue), "started"},
		{"a Deployment that became unavailable", deployment("started", corev1.ConditionTrue), deployment("started", corev1.ConditionFalse), "started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := priorityqueue.New[rtreconcile.Request]("coalesce-test")
			defer q.ShutDown()
			// Objects created before the child's change, queued for their first reconcile as
			// the handler of the reconciled type queues them.
			q.Add(request("new-1"))
			q.Add(request("new-2"))
			reconcile.Coalesce(toOwner, time.Hour).Update(t.Context(), event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}, q)
			got, priority, _ := q.GetWithPriority()
			if got.Name != tc.wantFirst || priority != reconcile.ReadinessPriority {
				t.Errorf("served %s at priority %d first, want %s at %d", got.Name, priority, tc.wantFirst, reconcile.ReadinessPriority)
			}
		})
	}
	t.Run("an owner already queued moves ahead", func(t *testing.T) {
		q := priorityqueue.New[rtreconcile.Request]("coalesce-test")
		defer q.ShutDown()
		q.Add(request("new-1"))
		q.Add(request("started")) // its own status write brought it back
		q.Add(request("new-2"))
		reconcile.Coalesce(toOwner, time.Hour).Update(t.Context(), event.UpdateEvent{
			ObjectOld: deployment("started", corev1.ConditionFalse), ObjectNew: deployment("started", corev1.ConditionTrue)}, q)
		var order []string
		for range 3 {
			got, _, _ := q.GetWithPriority()
			order = append(order, got.Name)
			q.Done(got)
		}
		if order[0] != "started" || q.Len() != 0 {
			t.Errorf("served %v with %d left, want started first and once", order, q.Len())
		}
	})
}
