package reconcile

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/reconcilekit/reconcilekit/internal/statusfield"
)

// errUnwritable is what a logic that changed anything but the status, labels, annotations
// and finalizers of its object gets: the shell does not write such changes, since the spec
// belongs to whoever wrote it.
var errUnwritable = errors.New("the logic changed its object outside status, labels, annotations and finalizers")

// IsUnwritable reports whether err says that the logic changed its object where the shell
// does not write (see New).
func IsUnwritable(err error) bool { return errors.Is(err, errUnwritable) }

// revertUnwritable undoes every change the logic made to after outside its status, labels,
// annotations and finalizers, and returns an error naming the fields, or nil.
func revertUnwritable[T client.Object](before, after T) error {
	b, a := reflect.ValueOf(before).Elem(), reflect.ValueOf(after).Elem()
	if a.Kind() != reflect.Struct {
		return nil
	}
	var changed []string
	status := -1
	if f, ok := statusfield.Of(a.Type()); ok {
		status = f.Index[0]
	}
	for i := range a.NumField() {
		f := a.Type().Field(i)
		switch {
		case i == status, f.Name == "TypeMeta":
		case f.Name == "ObjectMeta":
			bm, am := b.Field(i).Addr().Interface().(*metav1.ObjectMeta), a.Field(i).Addr().Interface().(*metav1.ObjectMeta)
			kept := *bm
			kept.Labels, kept.Annotations, kept.Finalizers = am.Labels, am.Annotations, am.Finalizers
			if !equality.Semantic.DeepEqual(kept, *am) {
				changed = append(changed, "metadata")
				*am = kept
			}
		default:
			if !equality.Semantic.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
				changed = append(changed, jsonName(f))
				a.Field(i).Set(b.Field(i))
			}
		}
	}
	if changed == nil {
		return nil
	}
	return fmt.Errorf("%w: %s, which the shell does not write", errUnwritable, strings.Join(changed, ", "))
}

func jsonName(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
		return name
	}
	return f.Name
}

// write sends what the logic changed through the requests that can write it, each guarded
// by the resourceVersion read: labels, annotations and finalizers with a merge patch of the
// object, then the status with a merge patch of its status subresource. obj takes the
// resourceVersion written.
func (r *shell[T]) write(ctx context.Context, before, obj T) error {
	defer r.memory.writing(client.ObjectKeyFromObject(obj))()
	lock, owner := client.MergeFromWithOptimisticLock{}, client.FieldOwner(r.options.fieldOwner)
	base, metaWritten := before, false
	if !equality.Semantic.DeepEqual(before.GetLabels(), obj.GetLabels()) ||
		!equality.Semantic.DeepEqual(before.GetAnnotations(), obj.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(before.GetFinalizers(), obj.GetFinalizers()) {
		meta := before.DeepCopyObject().(T)
		meta.SetLabels(obj.GetLabels())
		meta.SetAnnotations(obj.GetAnnotations())
		meta.SetFinalizers(obj.GetFinalizers())
		if err := r.client.Patch(ctx, meta, client.MergeFromWithOptions(before, lock), owner); err != nil {
			return err
		}
		log.FromContext(ctx).V(1).Info("metadata written")
		base, metaWritten = meta, true
	}
	field, found := statusfield.Of(reflect.TypeOf(obj))
	status := func(o T) reflect.Value { return reflect.ValueOf(o).Elem().FieldByIndex(field.Index) }
	if !found || equality.Semantic.DeepEqual(status(before).Interface(), status(obj).Interface()) {
		if metaWritten {
			r.remember(ctx, base) // its status, unchanged, is obj's
			obj.SetResourceVersion(base.GetResourceVersion())
		}
		return nil
	}
	w := base.DeepCopyObject().(T)
	status(w).Set(status(obj))
	if err := r.client.Status().Patch(ctx, w, client.MergeFromWithOptions(base, lock), owner); err != nil {
		return err
	}
	log.FromContext(ctx).V(1).Info("status written")
	r.remember(ctx, w)
	// obj is now what was written: a write after this one, such as the removal of the
	// finalizer after the cleanup's status, is guarded by the new resourceVersion.
	obj.SetResourceVersion(w.GetResourceVersion())
	return nil
}
