package sharding

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// crdRecheck is how often the assigner asks the API server whether the CRD of an optional
// child kind came or went. A variable so that a test can shorten it.
var crdRecheck = 5 * time.Second

// childKinds follows which of a shard's child kinds the API server serves: a kind the
// declaration does not declare optional (reconcile.WithOptional) always; an optional one
// while its CRD is established. A cache of a kind that is not served never syncs, and a
// read of one through the manager's cache waits for ever: the assigner's caches, its
// lists and a drain's take only the kinds served.
//
// It asks discovery, not the manager's RESTMapper, which answers for an optional kind
// whose CRD is absent (so that the manager's cache can be made without it). The API server
// lists a CRD's kind in discovery once the CRD is established, for its served versions.
type childKinds struct {
	gvks     []schema.GroupVersionKind // by index of Shard.children
	optional []bool
	discover discovery.DiscoveryInterface // nil until Shard.Run has the manager

	mu     sync.Mutex
	served []bool
}

// newChildKinds returns the kinds of children, those in optional among them, as scheme
// names them; every optional kind is taken as absent until refresh says otherwise.
func newChildKinds(children, optional []client.Object, scheme *runtime.Scheme) (*childKinds, error) {
	k := &childKinds{}
	for _, child := range children {
		gvk, err := apiutil.GVKForObject(child, scheme)
		if err != nil {
			return nil, fmt.Errorf("sharding: %w", err)
		}
		opt := slices.ContainsFunc(optional, func(o client.Object) bool { return reflect.TypeOf(o) == reflect.TypeOf(child) })
		k.gvks = append(k.gvks, gvk)
		k.optional = append(k.optional, opt)
		k.served = append(k.served, !opt)
	}
	return k, nil
}

// isServed reports whether the API server serves the child kind of index i; every kind
// is taken as served before Shard.Run has looked.
func (k *childKinds) isServed(i int) bool {
	if k == nil {
		return true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.served[i]
}

// forget takes the child kind of index i as not served, so that the next refresh that
// finds it served reports it as come again.
func (k *childKinds) forget(i int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.served[i] = !k.optional[i]
}

// snapshot returns, by index of Shard.children, whether each kind is served now.
func (k *childKinds) snapshot() []bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.served)
}

// hasOptional reports whether any child kind is optional: only then is there anything to
// refresh.
func (k *childKinds) hasOptional() bool { return slices.Contains(k.optional, true) }

// refresh asks the API server which optional kinds it serves now, and returns the indexes
// of those that came and of those that went since the last refresh.
func (k *childKinds) refresh(ctx context.Context) (came, went []int, err error) {
	for i, gvk := range k.gvks {
		if !k.optional[i] {
			continue
		}
		served, err := k.serves(ctx, gvk)
		if err != nil {
			return nil, nil, err
		}
		k.mu.Lock()
		switch {
		case served && !k.served[i]:
			came = append(came, i)
		case !served && k.served[i]:
			went = append(went, i)
		}
		k.served[i] = served
		k.mu.Unlock()
	}
	return came, went, nil
}

// serves asks discovery whether the API server serves gvk.
func (k *childKinds) serves(ctx context.Context, gvk schema.GroupVersionKind) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	resources, err := k.discover.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil // no CRD of the group serves the version
	}
	if err != nil {
		return false, fmt.Errorf("sharding: asking whether %s is served: %w", gvk, err)
	}
	return slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool {
		return r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") // not a subresource
	}), nil
}
