package main

import (
	"context"
	"slices"
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
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/readiness"
)

// convergedPodSet runs a reconciler until its PodSet has converged on a fake API server and
// returns a client that serves the converged objects from memory and refuses writes.
func convergedPodSet(b *testing.B, reconciler func(client.Client) rtreconcile.Reconciler) client.Client {
	b.Helper()
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "set", UID: "8c2e4b7a-podset", Generation: 1},
		Spec:       appsv1alpha1.PodSetSpec{Size: 1},
	}
	server, r, dep := fakeRollout(b, appsv1alpha1.AddToScheme, ps, reconciler)
	ctx, key := b.Context(), client.ObjectKeyFromObject(ps)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "set-7d4b9c-x2x8q", Labels: dep.Spec.Template.Labels},
		Spec:       dep.Spec.Template.Spec,
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if err := server.Create(ctx, pod); err != nil {
		b.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		b.Fatal(err)
	}
	if err := server.Get(ctx, key, ps); err != nil {
		b.Fatal(err)
	}
	if err := server.Get(ctx, key, dep); err != nil {
		b.Fatal(err)
	}
	if len(ps.Status.PodNames) != 1 {
		b.Fatalf("the PodSet did not converge: its status is %+v", ps.Status)
	}
	return cached{Client: server, objects: []client.Object{ps, dep, pod}}
}

// podSetByHand is the PodSet reconcile as it is often written by hand: the same
// Deployment through controllerutil.CreateOrUpdate, the same sorted pod names and
// conditions, and a status update only when the status changed.
type podSetByHand struct{ client client.Client }

func (r podSetByHand) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ps := &appsv1alpha1.PodSet{}
	if err := r.client.Get(ctx, req.NamespacedName, ps); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want := podset.Deployment(ps)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.client, dep, func() error {
		dep.Labels = want.Labels
		dep.Spec.Replicas = want.Spec.Replicas
		if dep.CreationTimestamp.IsZero() {
			dep.Spec.Selector = want.Spec.Selector
		}
		dep.Spec.Template = want.Spec.Template
		return controllerutil.SetControllerReference(ps, dep, r.client.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(ps.Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		return ctrl.Result{}, err
	}

	before := ps.Status.DeepCopy()
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	ps.Status.PodNames = names
	ps.Status.ReadyReplicas = dep.Status.ReadyReplicas
	ready := readiness.Deployment(dep)
	set := func(typ string, on bool) {
		status := metav1.ConditionFalse
		if on {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&ps.Status.Conditions, metav1.Condition{Type: typ, Status: status,
			Reason: ready.Reason, Message: ready.Message, ObservedGeneration: ps.Generation})
	}
	set(conditions.Available, ready.Rollout == readiness.RolloutComplete)
	set(conditions.Progressing, ready.Rollout == readiness.RolloutInProgress)
	set(conditions.Degraded, ready.Rollout == readiness.RolloutFailed)
	ps.Status.ObservedGeneration = ps.Generation
	if equality.Semantic.DeepEqual(before, &ps.Status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.client.Status().Update(ctx, ps)
}
