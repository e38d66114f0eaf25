package explore

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Step is one move of a workload, made with an administrator's client in the run's
// namespace, as a person or another program would make it. Build it with Create, Update
// or Delete, or set Do for any other move.
type Step struct {
	// Name says what the step does, in reports: "create PodSet web".
	Name string

	// Do makes the move. An error fails the exploration: the workload itself is wrong.
	Do func(ctx context.Context, c client.Client, namespace string) error

	// object is what Create creates: a custom resource of the operator's kinds, or an
	// object of someone else's that the operator must leave alone.
	object client.Object
	// deletes are the "Kind name" of the objects Delete deletes.
	deletes []string
}

// Create is the step that creates obj in the run's namespace. An object of a kind the
// operator does not reconcile is someone else's: the operator writing it is a violation.
func Create(obj client.Object) Step {
	return Step{
		Name:   fmt.Sprintf("create %s %s", kindOf(obj), obj.GetName()),
		object: obj,
		Do: func(ctx context.Context, c client.Client, namespace string) error {
			o := obj.DeepCopyObject().(client.Object)
			o.SetNamespace(namespace)
			return c.Create(ctx, o)
		},
	}
}

// Update is the step that reads obj (by its kind, from the run's namespace, by name),
// applies change to it and writes it back, again on a conflict: a person's edit of
// the spec.
func Update(name string, obj client.Object, change func(client.Object)) Step {
	return Step{
		Name: fmt.Sprintf("update %s %s: %s", kindOf(obj), obj.GetName(), name),
		Do: func(ctx context.Context, c client.Client, namespace string) error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				o := obj.DeepCopyObject().(client.Object)
				if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: obj.GetName()}, o); err != nil {
					return err
				}
				change(o)
				return c.Update(ctx, o)
			})
		},
	}
}

// Delete is the step that deletes objs from the run's namespace, by name, at once; the
// operator's finalizer, if any, holds each until its cleanup is done.
func Delete(objs ...client.Object) Step {
	names := make([]string, len(objs))
	for i, obj := range objs {
		names[i] = kindOf(obj) + " " + obj.GetName()
	}
	return Step{
		Name:    "delete " + strings.Join(names, ", "),
		deletes: names,
		Do: func(ctx context.Context, c client.Client, namespace string) error {
			for _, obj := range objs {
				o := obj.DeepCopyObject().(client.Object)
				o.SetNamespace(namespace)
				if err := client.IgnoreNotFound(c.Delete(ctx, o)); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// kindOf names obj's kind by its Go type, for a step's name: a typed object has no kind
// of its own until it is read.
func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := fmt.Sprintf("%T", obj)
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] == '.' {
			return t[i+1:]
		}
	}
	return t
}
