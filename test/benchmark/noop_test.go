package main

import (
	"context"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	atcontroller "github.com/reconcilekit/reconcilekit/examples/at/controller"
	memcached "github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
)

// BenchmarkNoOpReconcile reconciles, for each example, an object that needs nothing done
// through a client that reads from memory as the manager's cache does: the cost of every
// resync and of every event that changes nothing. A converged Memcached and PodSet, whose
// Deployment is available (with the PodSet's one pod ready); a RUNNING At whose pod is
// still running. Each library-built reconciler runs next to the same logic written by hand
// with controllerutil.CreateOrUpdate.
func BenchmarkNoOpReconcile(b *testing.B) {
	type reconciler = func(client.Client) rtreconcile.Reconciler
	for _, bc := range []struct {
		kind, name string
		key        client.ObjectKey
		// settle runs the reconciler until nothing is left to do and returns a client
		// that serves what it left from memory and refuses writes.
		settle     func(*testing.B, reconciler) client.Client
		reconciler reconciler
	}{
		{"Memcached", "reconcilekit", client.ObjectKey{Namespace: "bench", Name: "cache"}, convergedMemcached,
			func(c client.Client) rtreconcile.Reconciler { return memcached.New().Reconciler(c) }},
		{"Memcached", "CreateOrUpdate", client.ObjectKey{Namespace: "bench", Name: "cache"}, convergedMemcached,
			func(c client.Client) rtreconcile.Reconciler { return memcachedByHand{client: c} }},
		{"PodSet", "reconcilekit", client.ObjectKey{Namespace: "bench", Name: "set"}, convergedPodSet,
			func(c client.Client) rtreconcile.Reconciler { return podset.New().Reconciler(c) }},
		{"PodSet", "CreateOrUpdate", client.ObjectKey{Namespace: "bench", Name: "set"}, convergedPodSet,
			func(c client.Client) rtreconcile.Reconciler { return podSetByHand{client: c} }},
		{"At", "reconcilekit", client.ObjectKey{Namespace: "bench", Name: "job"}, runningAt,
			func(c client.Client) rtreconcile.Reconciler { return atcontroller.New().Reconciler(c) }},
		{"At", "CreateOrUpdate", client.ObjectKey{Namespace: "bench", Name: "job"}, runningAt,
			func(c client.Client) rtreconcile.Reconciler { return atByHand{client: c} }},
	} {
		b.Run(bc.kind+"/"+bc.name, func(b *testing.B) {
			c := bc.settle(b, bc.reconciler)
			r := bc.reconciler(c)
			req := ctrl.Request{NamespacedName: bc.key}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Reconcile(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cached reads like the manager's client, a deep copy of an object held in memory, where
// the fake client would encode and decode JSON. Any write fails the benchmark: a

// fakeRollout serves obj from a fake API server whose scheme adds addToScheme's types,
// reconciles it once with reconciler, and marks the Deployment it then has (named after
// obj) rolled out and available, as kube-controller-manager would. It returns the server,
// the reconciler and the Deployment.
func fakeRollout(b *testing.B, addToScheme func(*runtime.Scheme) error, obj client.Object,
	reconciler func(client.Client) rtreconcile.Reconciler) (client.Client, rtreconcile.Reconciler, *appsv1.Deployment) {
	b.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := addToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	server := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).WithStatusSubresource(obj).Build()
	ctx, key := b.Context(), client.ObjectKeyFromObject(obj)
	r := reconciler(server)
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		b.Fatal(err)
	}
	dep := &appsv1.Deployment{}
	if err := server.Get(ctx, key, dep); err != nil {
		b.Fatal(err)
	}
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
	if err := server.Status().Update(ctx, dep); err != nil {
		b.Fatal(err)
	}
	return server, r, dep
}

// reconcile that changes nothing must make none.
type cached struct {
	client.Client
	objects []client.Object
}

func (c cached) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	for _, o := range c.objects {
		if reflect.TypeOf(o) == reflect.TypeOf(obj) && client.ObjectKeyFromObject(o) == key {
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(o.DeepCopyObject()).Elem())
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

// List lists pods, the only objects the examples' controllers list.
func (c cached) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	pods := list.(*corev1.PodList)
	pods.Items = nil
	for _, obj := range c.objects {
		pod, ok := obj.(*corev1.Pod)
		if ok && pod.Namespace == o.Namespace && (o.LabelSelector == nil || o.LabelSelector.Matches(labels.Set(pod.Labels))) {
			pods.Items = append(pods.Items, *pod.DeepCopy())
		}
	}
	return nil
}

func (c cached) Create(context.Context, client.Object, ...client.CreateOption) error {
	return errWrite
}

func (c cached) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return errWrite
}

func (c cached) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errWrite
}

func (c cached) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return errWrite
}

func (c cached) Status() client.SubResourceWriter { return cachedStatus{} }

type cachedStatus struct{ client.SubResourceWriter }

func (cachedStatus) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return errWrite
}

func (cachedStatus) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return errWrite
}

var errWrite = apierrors.NewBadRequest("a reconcile that changes nothing wrote")
