package main

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/readiness"
)

// convergedMemcached runs a reconciler until its Memcached has converged on a fake API server and
// returns a client that serves the converged objects from memory and refuses writes.
func convergedMemcached(b *testing.B, reconciler func(client.Client) rtreconcile.Reconciler) client.Client {
	b.Helper()
	mc := &cachev1beta1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "cache", UID: "5d3f6a1c-memcached", Generation: 1},
		Spec:       cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{Port: 11211}},
	}
	server, r, dep := fakeRollout(b, cachev1beta1.AddToScheme, mc, reconciler)
	ctx, key := b.Context(), client.ObjectKeyFromObject(mc)
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		b.Fatal(err)
	}
	if err := server.Get(ctx, key, mc); err != nil {
		b.Fatal(err)
	}
	if err := server.Get(ctx, key, dep); err != nil {
		b.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, conditions.Available) {
		b.Fatalf("the Memcached did not converge: its status is %+v", mc.Status)
	}
	objects := []client.Object{mc, dep}
	// The library-built operator puts a Service in front of the pods; the seed has none.
	if svc := (&corev1.Service{}); server.Get(ctx, key, svc) == nil {
		objects = append(objects, svc)
	}
	return cached{Client: server, objects: objects}
}

// memcachedByHand is the Memcached reconcile as it is often written by hand: the same
// Deployment through controllerutil.CreateOrUpdate, the same conditions through
// meta.SetStatusCondition, and a status update only when the status changed.
type memcachedByHand struct{ client client.Client }

func (r memcachedByHand) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mc := &cachev1beta1.Memcached{}
	if err := r.client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want := memcached.Deployment(mc)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.client, dep, func() error {
		dep.Labels = want.Labels
		dep.Spec.Replicas = want.Spec.Replicas
		if dep.CreationTimestamp.IsZero() {
			dep.Spec.Selector = want.Spec.Selector
		}
		dep.Spec.Template = want.Spec.Template
		return controllerutil.SetControllerReference(mc, dep, r.client.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}

	before := mc.Status.DeepCopy()
	ready := readiness.Deployment(dep)
	set := func(typ string, on bool) {
		status := metav1.ConditionFalse
		if on {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: typ, Status: status,
			Reason: ready.Reason, Message: ready.Message, ObservedGeneration: mc.Generation})
	}
	set(conditions.Available, ready.Rollout == readiness.RolloutComplete)
	set(conditions.Progressing, ready.Rollout == readiness.RolloutInProgress)
	set(conditions.Degraded, ready.Rollout == readiness.RolloutFailed)
	mc.Status.ObservedGeneration = mc.Generation
	if equality.Semantic.DeepEqual(before, &mc.Status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.client.Status().Update(ctx, mc)
}
