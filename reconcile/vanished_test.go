package reconcile_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// ownerCluster is what EnqueueOwner reads of a manager: its scheme and REST mapper.
type ownerCluster struct {
	cluster.Cluster
	scheme *runtime.Scheme
	mapper meta.RESTMapper
}

func (c ownerCluster) GetScheme() *runtime.Scheme     { return c.scheme }
func (c ownerCluster) GetRESTMapper() meta.RESTMapper { return c.mapper }

var widgetGVK = schema.GroupVersionKind{Group: "test.reconcilekit.io", Version: "v1", Kind: "Widget"}

func TestAChildDeletedWithItsOwnerIsNotCreatedAgain(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ownerGone  bool // the owner is deleted on the API server, but not yet in the cache
		childEvent bool // the cache delivered the child's deletion
		created    int  // children the logic creates again
		freshReads int  // reads of the owner from the API server
	}{
		{"the owner is gone: nothing is created", true, true, 0, 1},
		{"the owner lives (a person deleted the child): it is created again", false, true, 1, 1},
		{"no child was deleted: the shell trusts its cache, with no read", true, false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := f.context(t)
			owner := f.live(t)
			withConfigMaps := runtime.NewScheme()
			for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, func(s *runtime.Scheme) error {
				s.AddKnownTypes(widgetGVK.GroupVersion(), &Widget{}, &WidgetList{})
				metav1.AddToGroupVersion(s, widgetGVK.GroupVersion())
				return nil
			}} {
				if err := add(withConfigMaps); err != nil {
					t.Fatal(err)
				}
			}
			c, err := client.New(f.counter.Wrap(cp(t).Config), client.Options{Scheme: withConfigMaps})
			if err != nil {
				t.Fatal(err)
			}
			cache := &laggingCache{Client: c}
			cache.freeze(owner)
			created := 0
			r := reconcile.NewShell(cache, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}}
				_, result, err := ownership.Ensure(ctx, s.Writer, w, child)
				if result.Action == ownership.Created {
					created++
				}
				return requeue.Retry(err)
			}), reconcile.WithClock(f.clock), reconcile.WithExpectationTimeout(0), reconcile.WithChildren(&corev1.ConfigMap{}))
			req := rtreconcile.Request{NamespacedName: client.ObjectKeyFromObject(owner)}

			child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, widgetGVK)}}}
			if tc.ownerGone {
				if err := f.client.Delete(ctx, owner); err != nil {
					t.Fatal(err)
				}
			}
			if tc.childEvent {
				childDeleted(ctx, withConfigMaps, r, child)
			}
			f.counter.Reset()
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			reads := f.counter.Count("get", "widgets")
			if created != tc.created || reads != tc.freshReads {
				t.Errorf("the child was created %d times after %d fresh reads of its owner, want %d after %d", created, reads, tc.created, tc.freshReads)
			}
		})
	}
}

func TestTheNoteOfADeletedChildGoesWithItsOwner(t *testing.T) {
	f := newFixture(t)
	ctx := f.context(t)
	owner := f.live(t)
	r := f.reconciler(mustNotRun(t, "the Widget is deleted"))
	before := r.Bereaved()
	if err := f.client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	child := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "child",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, widgetGVK)}}}
	childDeleted(ctx, scheme, r, child)
	if n := r.Bereaved(); n != before+1 {
		t.Fatalf("%d owners noted after a child's deletion, want %d", n, before+1)
	}
	if _, err := f.reconcile(t, r); err != nil {
		t.Fatal(err)
	}
	if n := r.Bereaved(); n != before {
		t.Errorf("%d owners noted after the deleted owner's reconcile, want %d: the note outlives its owner", n, before)
	}
}

// childDeleted hands child's deletion, as the cache delivers it, to r's handler of a child
// kind of Widgets.
func childDeleted(ctx context.Context, s *runtime.Scheme, r reconcile.Shell[*Widget], child client.Object) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(widgetGVK, meta.RESTScopeNamespace)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[rtreconcile.Request]())
	defer q.ShutDown()
	r.EnqueueOwner(ownerCluster{scheme: s, mapper: mapper}, &Widget{}, child).Delete(ctx, event.DeleteEvent{Object: child}, q)
}
