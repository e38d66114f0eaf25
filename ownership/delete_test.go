package ownership_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// cached is setup with the manager's kind of client: reads from an informer cache of the
// namespace, writes to the API server, both counted. It returns an uncached client too, to
// arrange what the test needs and to see the truth.
func cached(t *testing.T) (cachedClient client.Client, direct client.Client, counter *reconciletest.Counter, owner *corev1.ConfigMap) {
	t.Helper()
	direct, counter, owner = clustertest.Setup(t, cp(t))
	cfg := counter.Wrap(cp(t).Config)
	informers, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme, DefaultNamespaces: map[string]cache.Config{owner.Namespace: {}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = informers.Start(ctx) }()
	cachedClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme, Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		t.Fatal(err)
	}
	// Start the ConfigMap informer now, so that its list and watch are not counted later.
	if err := cachedClient.List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace(owner.Namespace)); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	return cachedClient, direct, counter, owner
}

// awaitCache waits until the cache holds obj as the API server does (by resourceVersion),
// or, for a nil want, no longer holds it.
func awaitCache(t *testing.T, c client.Client, key client.ObjectKey, want *corev1.ConfigMap) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		got := &corev1.ConfigMap{}
		err := c.Get(ctx, key, got)
		switch {
		case want == nil && apierrors.IsNotFound(err):
			return nil
		case want == nil:
			return fmt.Errorf("the cache still holds %s", key)
		case err != nil:
			return err
		case got.ResourceVersion != want.ResourceVersion:
			return fmt.Errorf("the cache holds %s at %s, want %s", key, got.ResourceVersion, want.ResourceVersion)
		}
		return nil
	})
}

// child creates a ConfigMap named name in owner's namespace, controlled by controller (nil
// for none), with the given labels.
func child(t *testing.T, c client.Client, owner client.Object, name string, controller client.Object, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: name, Labels: labels},
		Data:       map[string]string{"k": "v"},
	}
	if controller != nil {
		if err := ownership.SetController(controller, cm, scheme.Scheme); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

func exists(t *testing.T, c client.Client, obj client.Object) bool {
	t.Helper()
	err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func named(owner client.Object, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: name}}
}

func TestDeleteDeletesAChildTheOwnerControlsWithOneRequest(t *testing.T) {
	c, direct, counter, owner := cached(t)
	cm := child(t, direct, owner, "undesired", owner, nil)
	awaitCache(t, c, client.ObjectKeyFromObject(cm), cm)
	counter.Reset()

	result, err := ownership.Delete(t.Context(), ownership.NewTestWriter(c), owner, named(owner, "undesired"))
	if err != nil || result.Action != ownership.Deleted {
		t.Fatalf("Delete = %v, %v; want Deleted", result.Action, err)
	}
	if counter.Writes() != 1 || counter.Count("delete", "configmaps") != 1 || counter.Reads() != 0 {
		t.Errorf("Delete made these requests, want one delete:\n%s", counter)
	}
	if exists(t, direct, cm) {
		t.Error("the child still exists")
	}
}

func TestDeleteSendsNothingForAChildTheCacheSaysIsGone(t *testing.T) {
	c, _, counter, owner := cached(t)
	result, err := ownership.Delete(t.Context(), ownership.NewTestWriter(c), owner, named(owner, "never-created"))
	if err != nil || result.Action != ownership.Unchanged {
		t.Fatalf("Delete = %v, %v; want Unchanged", result.Action, err)
	}
	if counter.Writes()+counter.Reads() != 0 {
		t.Errorf("Delete made requests for an object that is not there:\n%s", counter)
	}
}

func TestDeleteLeavesAnObjectItDoesNotControlAlone(t *testing.T) {
	tests := map[string]func(t *testing.T, direct client.Client, owner *corev1.ConfigMap) client.Object{
		"controlled by another owner": func(t *testing.T, direct client.Client, owner *corev1.ConfigMap) client.Object {
			return child(t, direct, owner, "other-owner", child(t, direct, owner, "another", nil, nil), nil)
		},
		"controlled by nothing": func(t *testing.T, direct client.Client, owner *corev1.ConfigMap) client.Object {
			return child(t, direct, owner, "orphan", nil, nil)
		},
		"owned but not controlled": func(t *testing.T, direct client.Client, owner *corev1.ConfigMap) client.Object {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "shared",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
			if err := direct.Create(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			return cm
		},
	}
	for name, arrange := range tests {
		t.Run(name, func(t *testing.T) {
			c, direct, counter, owner := cached(t)
			foreign := arrange(t, direct, owner)
			reconciletest.Eventually(t, func(ctx context.Context) error {
				return c.Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.ConfigMap{})
			})
			counter.Reset()
			_, err := ownership.Delete(t.Context(), ownership.NewTestWriter(c), owner, named(owner, foreign.GetName()))
			if !ownership.IsNotControlled(err) {
				t.Errorf("Delete error = %v, want a NotControlledError", err)
			}
			if counter.Writes() != 0 || !exists(t, direct, foreign) {
				t.Errorf("Delete touched an object it does not control:\n%s", counter)
			}
		})
	}
}

// A cache that lags behind a deletion still holds the child: the delete it sends finds
// nothing, which is what was wanted.
func TestDeleteTakesAStaleCacheHitForSuccess(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	cm := child(t, c, owner, "gone", owner, nil)
	stale := staleReads(c, cm)
	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	result, err := ownership.Delete(t.Context(), ownership.NewTestWriter(stale), owner, named(owner, "gone"))
	if err != nil || result.Action != ownership.Unchanged {
		t.Errorf("Delete = %v, %v; want Unchanged", result.Action, err)
	}
	if counter.Count("delete", "configmaps") != 1 {
		t.Errorf("requests:\n%s", counter)
	}
}

// The cache still holds the child the owner controlled, but someone has since deleted it
// and created an object of their own under its name: that one must survive.
func TestDeleteNeverDeletesAnObjectRecreatedUnderTheSameName(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	cm := child(t, c, owner, "recreated", owner, nil)
	stale := staleReads(c, cm)
	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	theirs := child(t, c, owner, "recreated", nil, nil)

	_, err := ownership.Delete(t.Context(), ownership.NewTestWriter(stale), owner, named(owner, "recreated"))
	if !apierrors.IsConflict(err) {
		t.Errorf("Delete error = %v, want a Conflict from the UID precondition", err)
	}
	if !exists(t, c, theirs) {
		t.Error("Delete deleted an object recreated by someone else")
	}
}

func TestDeleteSendsNothingForAChildAlreadyBeingDeleted(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "held", Finalizers: []string{"example.com/hold"}}}
	if err := ownership.SetController(owner, cm, scheme.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Patch(context.Background(), cm, client.RawPatch("application/json-patch+json", []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`)))
	})
	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	result, err := ownership.Delete(t.Context(), ownership.NewTestWriter(c), owner, named(owner, "held"))
	if err != nil || result.Action != ownership.Unchanged {
		t.Errorf("Delete = %v, %v; want Unchanged", result.Action, err)
	}
	if counter.Writes() != 0 {
		t.Errorf("Delete wrote to an object being deleted:\n%s", counter)
	}
}

// staleReads returns c whose reads of obj's name answer obj as it is now, whatever happens
// to it later: a cache that lags.
func staleReads(c client.WithWatch, obj *corev1.ConfigMap) client.Client {
	snapshot := obj.DeepCopy()
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, into client.Object, opts ...client.GetOption) error {
			if cm, ok := into.(*corev1.ConfigMap); ok && key == client.ObjectKeyFromObject(snapshot) {
				snapshot.DeepCopyInto(cm)
				return nil
			}
			return c.Get(ctx, key, into, opts...)
		},
	})
}
