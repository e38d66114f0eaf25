package ownership

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Deleted is the Action of a Delete that sent a delete request.
const Deleted Action = "Deleted"

// Delete makes sure the object obj names (its type, namespace and name; nothing else of it is
// read) no longer exists, when owner controls it: the counterpart of Ensure for a child that
// is no longer desired. It returns what it did: Deleted when it sent a delete, Unchanged when
// there was nothing to delete.
//
// The rules, in order:
//   - the object is read through c, normally the manager's cached client; when the cache does
//     not hold it, nothing is sent: it is already gone, Unchanged;
//   - an object controlled by anyone else, or by nothing, is left alone with a
//     *NotControlledError, as Ensure does; control is decided by UID;
//   - an object already being deleted (it has a deletionTimestamp) is not deleted again,
//     Unchanged: a finalizer holds it, and a second request would change nothing;
//   - otherwise one delete is sent, with background propagation (the garbage collector
//     deletes what the object owns) and the live object's UID as a precondition, so that an
//     object deleted and recreated under the same name since the cache saw it is never
//     deleted in its place: the API server answers with a Conflict, which the next reconcile
//     resolves from a fresh cache. A NotFound answer (a cache that lags behind a deletion)
//     is success, Unchanged.
//
// obj itself is not modified. Delete needs the get, list and watch permissions of the cache
// and delete on the kind: a refusal returns a *ForbiddenError naming those the role lacks.
func Delete(ctx context.Context, w Writer, owner, obj client.Object) (Result, error) {
	result, err := deleteChild(ctx, w, owner, obj)
	return result, w.explainForbidden(ctx, err, nil, obj, deleteVerbs)
}

// deleteChild is Delete, whose refusals the caller explains.
func deleteChild(ctx context.Context, w Writer, owner, obj client.Object) (Result, error) {
	if _, err := w.check(obj); err != nil {
		return Result{}, err
	}
	c := w.Client
	live, err := emptyLike(obj, c)
	if err != nil {
		return Result{}, err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return Result{Action: Unchanged}, nil
		}
		return Result{}, err
	}
	if !IsControlledBy(live, owner) {
		kind, _ := kindOf(obj, c.Scheme())
		return Result{}, &NotControlledError{
			Kind: kind, Namespace: live.GetNamespace(), Name: live.GetName(), Controller: controllerOf(live),
		}
	}
	return deleteControlled(ctx, c, live)
}

// deleteControlled deletes live, which the caller has found controlled by its owner.
func deleteControlled(ctx context.Context, c client.Client, live client.Object) (Result, error) {
	if live.GetDeletionTimestamp() != nil {
		return Result{Action: Unchanged}, nil
	}
	err := c.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.GetUID())}, client.PropagationPolicy("Background"))
	switch {
	case apierrors.IsNotFound(err):
		return Result{Action: Unchanged}, nil
	case err != nil:
		return Result{}, err
	}
	return Result{Action: Deleted}, nil
}

// emptyLike returns a new, empty object of obj's type to read into. Reading into obj itself,
// or a copy, could keep owner references the live object does not have: a decoder leaves a
// field the answer omits as it was. An unstructured object keeps only its kind.
func emptyLike(obj client.Object, c client.Client) (client.Object, error) {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		gvk, err := apiutil.GVKForObject(obj, c.Scheme())
		if err != nil {
			return nil, err
		}
		out := &unstructured.Unstructured{}
		out.SetGroupVersionKind(gvk)
		return out, nil
	}
	return newLike(obj), nil
}
