package reconcile

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// indexReferences registers an index of the objects of obj's kind (the referrers) by the
// names of the objects they reference, under field, in indexer.
func indexReferences[T client.Object](ctx context.Context, indexer client.FieldIndexer, obj T, field string, names func(T) []string) error {
	return indexer.IndexField(ctx, newLike(obj), field, func(o client.Object) []string {
		referrer, ok := o.(T)
		if !ok {
			return nil
		}
		return names(referrer)
	})
}

// enqueueReferrers returns the event handler of a referenced kind: every event on an object
// of that kind (created, updated, deleted) asks for a reconcile of each referrer that names
// it, in the object's namespace, and of no other object. The referrers are listed from c,
// the manager's cache, by the index under field; until the index is registered, by reading
// the names of every referrer of the namespace. A list of the cache sends no request; one
// that fails is logged and enqueues nothing: the cache has no other answer to give.
//
// Because a creation counts, a referrer that waits for an object it references (a condition
// naming the missing ConfigMap, no retry needed) is reconciled as soon as that object
// appears.
func enqueueReferrers[T client.Object](c client.Reader, list client.ObjectList, field string, names func(T) []string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []rtreconcile.Request {
		referrers := list.DeepCopyObject().(client.ObjectList)
		err := c.List(ctx, referrers, client.InNamespace(obj.GetNamespace()), client.MatchingFields{field: obj.GetName()})
		indexed := err == nil
		if err != nil && strings.Contains(err.Error(), field) { // no such index yet
			err = c.List(ctx, referrers, client.InNamespace(obj.GetNamespace()))
		}
		if err != nil {
			log.FromContext(ctx).Error(err, "listing the referrers of an object", "namespace", obj.GetNamespace(), "name", obj.GetName())
			return nil
		}
		var requests []rtreconcile.Request
		_ = meta.EachListItem(referrers, func(o runtime.Object) error {
			if r, ok := o.(T); ok && (indexed || slices.Contains(names(r), obj.GetName())) {
				requests = append(requests, rtreconcile.Request{NamespacedName: client.ObjectKeyFromObject(r)})
			}
			return nil
		})
		return requests
	})
}

// newList returns an empty list of obj's kind, or nil when the scheme has none.
func newList(scheme *runtime.Scheme, obj client.Object) client.ObjectList {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil
	}
	gvk.Kind += "List"
	list, err := scheme.New(gvk)
	if err != nil {
		return nil
	}
	l, _ := list.(client.ObjectList)
	return l
}
