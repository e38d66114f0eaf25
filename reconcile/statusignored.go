package reconcile

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/reconcilekit/reconcilekit/internal/statusfield"
)

// WithStatusIgnored declares child kinds, each declared by WithChildren too, whose status
// the logic never reads: an update of such a child that changes nothing but its status
// reconciles no owner. Some of Kubernetes' own controllers rewrite a status long after the
// owner has all it needs from the child: the disruption controller recomputes a
// PodDisruptionBudget's status on every change of its pods' readiness and, behind a burst,
// for minutes after them, and an owner that reads only the budget's spec would be woken by
// each of those writes. Any other change of the child (its spec or data, labels,
// annotations, owners, finalizers, its deletion) still reconciles the owner, so drift is
// still put right at once.
//
// Declare a kind only if neither the logic nor what it calls reads its status: not a
// StatefulSet or a Deployment whose readiness the owner reports (readiness.StatefulSet
// reads the StatefulSet's status and only the spec of its PodDisruptionBudget). A kind
// with no status field (a ConfigMap, a Secret), or one not declared by WithChildren, is
// refused when the manager is made.
func WithStatusIgnored(kinds ...client.Object) Option {
	return func(o *options) { o.wiring.ignoredStatus = append(o.wiring.ignoredStatus, kinds...) }
}

// checkStatusIgnored refuses the kinds of WithStatusIgnored that are no children or have
// no status.
func checkStatusIgnored(o *options) []error {
	var errs []error
	for _, kind := range o.wiring.ignoredStatus {
		switch {
		case !slices.ContainsFunc(o.wiring.children, sameKind(kind)):
			errs = append(errs, fmt.Errorf("WithStatusIgnored(&%s{}) names a kind the controller does not own: declare it with WithChildren too, or remove it", goName(kind)))
		case !hasStatus(kind):
			errs = append(errs, fmt.Errorf("WithStatusIgnored(&%s{}) names a kind with no status: its updates all change something else; remove it", goName(kind)))
		}
	}
	return errs
}

// ignoresStatus says whether the status of child's kind is ignored.
func (o *options) ignoresStatus(child client.Object) bool {
	return slices.ContainsFunc(o.wiring.ignoredStatus, sameKind(child))
}

// sameKind returns whether an object is of kind's Go type.
func sameKind(kind client.Object) func(client.Object) bool {
	return func(o client.Object) bool { return reflect.TypeOf(o) == reflect.TypeOf(kind) }
}

// hasStatus says whether obj's kind has a status: a status field (statusfield.Of), or any unstructured
// object, whose kind may have one.
func hasStatus(obj client.Object) bool {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return true
	}
	_, ok := statusfield.Of(reflect.TypeOf(obj))
	return ok
}

// ignoringStatus is a child kind's event handler that drops the updates that change
// nothing but the child's status, and passes every other event to its handler.
type ignoringStatus struct{ handler.EventHandler }

func (i ignoringStatus) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	if statusOnly(e.ObjectOld, e.ObjectNew) {
		return
	}
	i.EventHandler.Update(ctx, e, q)
}

// statusOnly says whether old and updated differ in their status alone (and in what every
// write changes: the resourceVersion and managedFields). Both are of a kind
// checkStatusIgnored let through: unstructured, or with a status field.
func statusOnly(old, updated client.Object) bool {
	return equality.Semantic.DeepEqual(withoutStatus(old), withoutStatus(updated))
}

// withoutStatus returns a copy of obj with no status, resourceVersion or managedFields. A
// typed object's copy is shallow: it shares what it does not change, and is only compared.
func withoutStatus(obj client.Object) client.Object {
	var c client.Object
	if u, ok := obj.(*unstructured.Unstructured); ok {
		copied := u.DeepCopy()
		unstructured.RemoveNestedField(copied.Object, "status")
		c = copied
	} else {
		v := reflect.New(reflect.TypeOf(obj).Elem())
		v.Elem().Set(reflect.ValueOf(obj).Elem())
		if f, ok := statusfield.Of(v.Type()); ok {
			v.Elem().FieldByIndex(f.Index).SetZero()
		}
		c = v.Interface().(client.Object)
	}
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	return c
}
