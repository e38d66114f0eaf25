package ownership_test

import (
	"context"
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// An owner's kind that gains a version, which its controller then reads, rewrites none of
// the objects it owns while the version their controller reference names is served (the
// garbage collector finds the owner through it), and moves their reference to the new
// version once it is not.
func TestEnsureKeepsTheOwnersVersionWhileItIsServed(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, gadget.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	admin := cp(t).Client(t, scheme)
	crd := gadget.CRD()
	if err := admin.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), crd) })
	// A new client, whose RESTMapper discovers what the API server serves now.
	counter := &reconciletest.Counter{}
	newClient := func() client.Client {
		c, err := client.New(counter.Wrap(cp(t).Config), client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	served := func(c client.Client) error {
		_, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "Gadget"}, "v1alpha1")
		return err
	}
	reconciletest.Eventually(t, func(context.Context) error { return served(newClient()) })

	c := newClient()
	ns := cp(t).Namespace(t)
	owner := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := c.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	// The child as the controller of v1alpha1 made it.
	old := &v1alpha1.Gadget{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(owner), old); err != nil {
		t.Fatal(err)
	}
	if live, result := ensure(t, c, old, clustertest.Deployment(old)); result.Action != ownership.Created || live.OwnerReferences[0].APIVersion != "webhooks.reconcilekit.io/v1alpha1" {
		t.Fatalf("Action %s, owner references %+v: want created, controlled by v1alpha1", result.Action, live.OwnerReferences)
	}

	// The controller of v1beta1 finds nothing to do.
	reconciletest.ExpectNoWrites(t, counter, func() {
		if live, result := ensure(t, c, owner, clustertest.Deployment(owner)); result.Action != ownership.Unchanged || live.OwnerReferences[0].APIVersion != "webhooks.reconcilekit.io/v1alpha1" {
			t.Errorf("Action %s (%s), owner references %+v: want unchanged, still v1alpha1", result.Action, result.Diff, live.OwnerReferences)
		}
	})

	// v1alpha1 is served no more: the reference moves to v1beta1.
	if err := admin.Get(t.Context(), client.ObjectKeyFromObject(crd), crd); err != nil {
		t.Fatal(err)
	}
	crd.Spec.Versions[0].Served = false
	if err := admin.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(context.Context) error {
		if served(newClient()) == nil {
			return errors.New("v1alpha1 is still served")
		}
		return nil
	})
	live, result := ensure(t, newClient(), owner, clustertest.Deployment(owner))
	if result.Action != ownership.Updated || len(live.OwnerReferences) != 1 || live.OwnerReferences[0].APIVersion != "webhooks.reconcilekit.io/v1beta1" {
		t.Errorf("Action %s, owner references %+v: want updated, controlled by v1beta1 alone", result.Action, live.OwnerReferences)
	}
}
