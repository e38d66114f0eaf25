package reconcile

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// When an owner is deleted, the garbage collector deletes its children, and the children's
// informer may deliver those deletions before the owner's informer delivers the owner's: a
// reconcile then finds the owner alive in the cache and creates the child again (the
// collector removes it once more, but the object was created twice). So the handler of a
// child kind notes each owner whose child the cache saw deleted, and the shell reads such an
// owner fresh from the API server before its logic runs: one read for each deleted child,
// none otherwise.

// forgottenAfter bounds a set whose notes are not taken, as for an owner never reconciled
// again.
const forgottenAfter = 10 * time.Minute

// ownerSet is the set of owners, by name, whose child was deleted since their last
// reconcile: one for each shell, so one manager's notes are never another's.
type ownerSet struct {
	mu     sync.Mutex
	owners map[types.NamespacedName]time.Time
}

func newOwnerSet() *ownerSet { return &ownerSet{owners: map[types.NamespacedName]time.Time{}} }

func (s *ownerSet) note(name types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if len(s.owners) >= 4096 {
		for k, at := range s.owners {
			if now.Sub(at) > forgottenAfter {
				delete(s.owners, k)
			}
		}
	}
	s.owners[name] = now
}

// take reports whether the owner was noted, and forgets it.
func (s *ownerSet) take(name types.NamespacedName) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.owners[name]
	delete(s.owners, name)
	return ok
}

// goneLive reports whether the API server no longer has cached as the cache shows it: it
// is deleted, being deleted, or replaced by another object of the same name. The read is
// fresh because the manager's client does not cache unstructured objects.
func goneLive(ctx context.Context, c client.Client, cached client.Object) (bool, error) {
	gvk, err := apiutil.GVKForObject(cached, c.Scheme())
	if err != nil {
		return false, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	switch err := c.Get(ctx, client.ObjectKeyFromObject(cached), live); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return live.GetUID() != cached.GetUID() || (live.GetDeletionTimestamp() != nil && cached.GetDeletionTimestamp() == nil), nil
}
