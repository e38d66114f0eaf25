package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	cnatv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	atcontroller "github.com/reconcilekit/reconcilekit/examples/at/controller"
)

// atTolerance is how early a schedule counts as due: the At controller's, as in the
// original cnat operator.
const atTolerance = 2 * time.Second

// runningAt runs a reconciler until its At is RUNNING, with its pod started, on a fake API
// server and returns a client that serves the objects from memory and refuses writes.
func runningAt(b *testing.B, reconciler func(client.Client) rtreconcile.Reconciler) client.Client {
	b.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := cnatv1alpha1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	at := &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "job", UID: "3f9a0c2d-at", Generation: 1},
		Spec:       cnatv1alpha1.AtSpec{Schedule: time.Now().UTC().Format(time.RFC3339), Command: "echo YAY"},
	}
	server := fake.NewClientBuilder().WithScheme(scheme).WithObjects(at).WithStatusSubresource(at).Build()
	ctx, key := b.Context(), client.ObjectKeyFromObject(at)
	r := reconciler(server)
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		b.Fatal(err)
	}
	if err := server.Get(ctx, key, at); err != nil {
		b.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := server.Get(ctx, client.ObjectKey{Namespace: at.Namespace, Name: at.Status.PodName}, pod); err != nil {
		b.Fatalf("the At started no pod: %v; its status is %+v", err, at.Status)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "command", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}}}
	if err := server.Update(ctx, pod); err != nil {
		b.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		b.Fatal(err)
	}
	if err := server.Get(ctx, key, at); err != nil {
		b.Fatal(err)
	}
	if at.Status.Phase != cnatv1alpha1.PhaseRunning {
		b.Fatalf("the At is not RUNNING: its status is %+v", at.Status)
	}
	return cached{Client: server, objects: []client.Object{at, pod}}
}

// atByHand is the At reconcile as it is often written by hand: the phases in a
// switch, the pod through controllerutil.CreateOrUpdate, the same conditions through
// meta.SetStatusCondition, and a status update only when the status changed.
type atByHand struct{ client client.Client }

func (r atByHand) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	at := &cnatv1alpha1.At{}
	if err := r.client.Get(ctx, req.NamespacedName, at); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := at.Status.DeepCopy()
	set := func(typ string, status metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&at.Status.Conditions, metav1.Condition{Type: typ, Status: status,
			Reason: reason, Message: message, ObservedGeneration: at.Generation})
	}
	var result ctrl.Result
	switch at.Status.Phase {
	case "", cnatv1alpha1.PhasePending:
		when, err := time.Parse(time.RFC3339, at.Spec.Schedule)
		if err != nil {
			set(atcontroller.Succeeded, metav1.ConditionFalse, "InvalidSchedule", err.Error())
			break
		}
		if wait := time.Until(when); wait > atTolerance {
			at.Status.Phase, result = cnatv1alpha1.PhasePending, ctrl.Result{RequeueAfter: wait}
			break
		}
		at.Status.Phase = cnatv1alpha1.PhaseRunning
		fallthrough
	case cnatv1alpha1.PhaseRunning:
		want := atcontroller.CommandPod(at)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
		if _, err := controllerutil.CreateOrUpdate(ctx, r.client, pod, func() error {
			if pod.CreationTimestamp.IsZero() {
				pod.Labels, pod.Spec = want.Labels, want.Spec
			}
			return controllerutil.SetControllerReference(at, pod, r.client.Scheme())
		}); err != nil {
			return ctrl.Result{}, err
		}
		at.Status.PodName = pod.Name
		switch pod.Status.Phase {
		case corev1.PodSucceeded:
			at.Status.Phase = cnatv1alpha1.PhaseDone
			set(atcontroller.Succeeded, metav1.ConditionTrue, "CommandSucceeded", "the command succeeded")
		case corev1.PodFailed:
			at.Status.Phase = cnatv1alpha1.PhaseDone
			set(atcontroller.Succeeded, metav1.ConditionFalse, "CommandFailed", "the command failed")
		}
	}
	ready, reason := metav1.ConditionFalse, "Running"
	switch at.Status.Phase {
	case cnatv1alpha1.PhasePending:
		reason = "Pending"
	case cnatv1alpha1.PhaseDone:
		ready, reason = metav1.ConditionTrue, "Done"
	}
	set(conditions.Ready, ready, reason, "phase "+at.Status.Phase)
	at.Status.ObservedGeneration = at.Generation
	if equality.Semantic.DeepEqual(before, &at.Status) {
		return result, nil
	}
	return result, r.client.Status().Update(ctx, at)
}
