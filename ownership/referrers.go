package ownership

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// IndexReferences registers an index of the objects of type O (the referrers, such as an
// operator's own kind) by the names of the objects they reference but do not own (a Secret or
// ConfigMap named in their spec), under the name field, in indexer (the manager's field
// indexer, mgr.GetFieldIndexer()). names returns the names one referrer references; a
// reference is to an object in the referrer's own namespace.
//
// EnqueueReferencing, given the same field, then reconciles the referrers of an object
// that changes. Call it before the manager starts, once per field and type.
//
// An index makes the manager's cache wait, as it starts, for the referrers' informer to
// sync, and controller-runtime gives that wait no timeout: an operator refused the list of
// its referrers then never starts its controllers and hangs on shutdown, where without the
// index its controller fails after its CacheSyncTimeout with a message. EnqueueReferrers
// needs no index; prefer it unless a namespace holds many referrers.
func IndexReferences[O client.Object](ctx context.Context, indexer client.FieldIndexer, field string, names func(O) []string) error {
	obj := reflect.New(reflect.TypeFor[O]().Elem()).Interface().(O)
	return indexer.IndexField(ctx, obj, field, func(o client.Object) []string {
		referrer, ok := o.(O)
		if !ok {
			return nil
		}
		return names(referrer)
	})
}

// EnqueueReferencing returns the event handler for a referenced kind: every event on an
// object of that kind (created, updated, deleted) asks for a reconcile of each referrer
// IndexReferences indexed under field with the object's name, in the object's namespace, and
// of no other object. list is an empty list of the referrers' kind, such as
// &v1alpha1.MemcachedList{}; c is the manager's client, whose cache holds the index.
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Memcached{}).
//		Watches(&corev1.ConfigMap{}, ownership.EnqueueReferencing(mgr.GetClient(), &v1alpha1.MemcachedList{}, "spec.configMapRef"))
//
// Because a creation counts, a referrer that waits for an object it references (a condition
// naming the missing ConfigMap, no retry needed) is reconciled as soon as that object
// appears. Listing the referrers is a read of the cache: it sends no request. A list that
// fails is logged and enqueues nothing: the cache has no other answer to give.
func EnqueueReferencing(c client.Reader, list client.ObjectList, field string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		referrers := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, referrers, client.InNamespace(obj.GetNamespace()), client.MatchingFields{field: obj.GetName()}); err != nil {
			log.FromContext(ctx).Error(err, "listing the referrers of an object", "field", field, "namespace", obj.GetNamespace(), "name", obj.GetName())
			return nil
		}
		var requests []reconcile.Request
		_ = meta.EachListItem(referrers, func(o runtime.Object) error {
			if r, ok := o.(client.Object); ok {
				requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(r)})
			}
			return nil
		})
		return requests
	})
}

// EnqueueReferrers is EnqueueReferencing without an index: every event on an object of a
// referenced kind lists the referrers (list's kind, such as &v1alpha1.MemcachedList{}) in the
// object's namespace from c, the manager's cache, and asks for a reconcile of each whose
// names include the object's name. A list of the cache sends no request; it costs a walk
// over the namespace's referrers per event, which is cheap where the referenced kind is
// restricted (a label selector in the cache options) and the referrers are few.
func EnqueueReferrers[O client.Object](c client.Reader, list client.ObjectList, names func(O) []string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		referrers := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, referrers, client.InNamespace(obj.GetNamespace())); err != nil {
			log.FromContext(ctx).Error(err, "listing the referrers of an object", "namespace", obj.GetNamespace(), "name", obj.GetName())
			return nil
		}
		var requests []reconcile.Request
		_ = meta.EachListItem(referrers, func(o runtime.Object) error {
			if r, ok := o.(O); ok && slices.Contains(names(r), obj.GetName()) {
				requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(r)})
			}
			return nil
		})
		return requests
	})
}

// ConfigHashAnnotation is the pod template annotation SetConfigHash writes. A change of it
// is a change of the pod template, so a Deployment (StatefulSet, DaemonSet) rolls its pods.
const ConfigHashAnnotation = "reconcilekit.io/config-hash"

// ConfigHash returns a short hash of what the pods of a workload read from the given objects:
// each one's namespace and name, and its content without metadata and status (a ConfigMap's
// data and binaryData, a Secret's type and data), the same whether the object is typed or
// unstructured. Metadata
// (labels, annotations, resourceVersion) does not count, so an object that is relabelled or
// merely re-saved keeps its hash. A nil object counts as absent, for an optional reference
// to an object that does not exist: its appearance changes the hash. The order of objs counts.
func ConfigHash(objs ...client.Object) (string, error) {
	entries := make([]any, len(objs))
	for i, obj := range objs {
		if obj == nil || reflect.ValueOf(obj).IsNil() {
			continue // null: absent
		}
		data, err := configData(obj)
		if err != nil {
			return "", err
		}
		entries[i] = map[string]any{"namespace": obj.GetNamespace(), "name": obj.GetName(), "data": data}
	}
	// encoding/json sorts map keys, so equal data hashes the same.
	b, err := json.Marshal(entries)
	if err != nil {
		return "", fmt.Errorf("hashing configuration: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// SetConfigHash sets the ConfigHashAnnotation of template to ConfigHash(objs...). Build the
// desired workload with it and pass it to Ensure: the workload is updated, and rolls, when
// the referenced data changes, and not otherwise.
func SetConfigHash(template *corev1.PodTemplateSpec, objs ...client.Object) error {
	h, err := ConfigHash(objs...)
	if err != nil {
		return err
	}
	if template.Annotations == nil {
		template.Annotations = map[string]string{}
	}
	template.Annotations[ConfigHashAnnotation] = h
	return nil
}

// configData is what a pod can read of obj: everything but metadata and status. Typed and
// unstructured forms of one object give the same content, so they hash the same.
func configData(obj client.Object) (map[string]any, error) {
	var u map[string]any
	if un, ok := obj.(*unstructured.Unstructured); ok {
		u = maps.Clone(un.Object)
	} else {
		var err error
		if u, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, fmt.Errorf("hashing %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
		}
	}
	// A typed object read by a typed client has no apiVersion and kind: leave them out of both.
	for _, k := range []string{"metadata", "status", "apiVersion", "kind"} {
		delete(u, k)
	}
	return u, nil
}
