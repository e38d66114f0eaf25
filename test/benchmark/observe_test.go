package main

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
)

func TestAnObjectConvergesOnceItsChildIsDoneAndItsStatusSaysSo(t *testing.T) {
	o := newObserver(kindNamed("memcached"), false, 2)
	o.child(deployment("a", "cache-a", true))
	o.object(memcachedObject("cache-b", true))
	o.object(memcachedObject("cache-a", true))
	if o.converged != 1 {
		t.Fatalf("converged = %d, want 1: only cache-a has both", o.converged)
	}
	o.child(deployment("b", "cache-b", true))
	if _, err := o.wait(t.Context(), time.Minute); err != nil {
		t.Errorf("both objects converged, yet: %v", err)
	}
}

func TestAnObjectThatRegressesNoLongerCountsAsConverged(t *testing.T) {
	o := newObserver(kindNamed("memcached"), false, 2)
	o.child(deployment("a", "cache-a", true))
	o.object(memcachedObject("cache-a", true))
	o.child(deployment("a", "cache-a", false))
	if o.converged != 0 {
		t.Errorf("converged = %d after the Deployment became unavailable, want 0", o.converged)
	}
}

func TestTheBarePipelineConvergesOnChildrenAloneByTheirOwnNames(t *testing.T) {
	o := newObserver(kindNamed("memcached"), true, 1)
	o.child(deployment("cache-a", "", true))
	if _, err := o.wait(t.Context(), time.Minute); err != nil {
		t.Errorf("the only Deployment is available, yet: %v", err)
	}
}

func TestWaitSaysHowManyConvergedWhenTimeRunsOut(t *testing.T) {
	o := newObserver(kindNamed("memcached"), true, 2)
	o.child(deployment("cache-a", "", true))
	_, err := o.wait(t.Context(), time.Millisecond)
	if err == nil || err.Error() != "1 of 2 objects converged in 1ms" {
		t.Errorf("wait = %v, want 1 of 2 objects converged in 1ms", err)
	}
}

// deployment is a one-replica Deployment, controlled by the named Memcached unless owner is
// empty, available or not.
func deployment(name, owner string, available bool) client.Object {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1},
	}
	if owner != "" {
		d.OwnerReferences = []metav1.OwnerReference{{Kind: "Memcached", Name: owner, Controller: ptr.To(true)}}
	}
	if available {
		d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1, 1
	}
	return d
}

// memcachedObject is a Memcached whose status says it is available, or not.
func memcachedObject(name string, available bool) client.Object {
	status := metav1.ConditionFalse
	if available {
		status = metav1.ConditionTrue
	}
	return &cachev1beta1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     cachev1beta1.MemcachedStatus{Conditions: []metav1.Condition{{Type: "Available", Status: status}}},
	}
}

func TestLatenciesRunFromEachObjectsCreationToItsFirstConvergence(t *testing.T) {
	o := newObserver(kindNamed("memcached"), false, 2)
	created := map[string]time.Time{"cache-a": time.Now(), "cache-b": time.Now()}
	o.child(deployment("a", "cache-a", true))
	o.object(memcachedObject("cache-a", true))
	first := o.convergedAt["cache-a"]
	o.child(deployment("a", "cache-a", false))
	o.child(deployment("a", "cache-a", true))
	got := o.latencies(created)
	if len(got) != 1 || got[0] != first.Sub(created["cache-a"]) {
		t.Errorf("latencies = %v, want cache-a's to its first convergence only (cache-b never converged)", got)
	}
}
