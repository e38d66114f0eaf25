package explore

import (
	"context"
	"encoding/json"
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

// Namespace stands for the run's namespace in the objects of a workload's steps: each
// run has a namespace of its own, and Create, Update and Delete write its name wherever
// an object's name or fields hold Namespace. The reports show the namespace so too.
//
// An object of a cluster-scoped kind must hold Namespace in its name, so that the runs
// made at once each have their own: a Tenant named Namespace, say, for a namespace
// of the same name, or "{namespace}-shop". Create labels it with RunLabel, and the run's
// operator lists and watches only the objects of its cluster-scoped kinds so labelled,
// as if the cluster were its run's alone.
const Namespace = "{namespace}"

// RunLabel labels the objects of cluster-scoped kinds that a run creates, with the run's
// namespace: what the run's operator is shown of them (Namespace).
const RunLabel = "reconcilekit.io/explore-run"

// Create is the step that creates obj in the run's namespace (cluster-scoped, labelled
// with the run: Namespace). An object of a kind the operator does not reconcile is
// someone else's: the operator writing it is a violation.
func Create(obj client.Object) Step {
	return Step{
		Name:   fmt.Sprintf("create %s %s", kindOf(obj), obj.GetName()),
		object: obj,
		Do: func(ctx context.Context, c client.Client, namespace string) error {
			o, err := inRun(c, obj, namespace)
			if err != nil {
				return err
			}
			return c.Create(ctx, o)
		},
	}
}

// inRun is a copy of obj for the run in namespace: Namespace replaced by it wherever it
// is written, in the namespace if its kind is namespaced, labelled with the run if not.
func inRun(c client.Client, obj client.Object, namespace string) (client.Object, error) {
	o := obj.DeepCopyObject().(client.Object)
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), Namespace, namespace)), o); err != nil {
		return nil, err
	}
	namespaced, err := c.IsObjectNamespaced(o)
	if err != nil {
		return nil, err
	}
	if namespaced {
		o.SetNamespace(namespace)
		return o, nil
	}
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[RunLabel] = namespace
	o.SetLabels(labels)
	return o, nil
}

// keyInRun is the key of obj in the run in namespace.
func keyInRun(c client.Client, obj client.Object, namespace string) (client.ObjectKey, error) {
	key := client.ObjectKey{Name: strings.ReplaceAll(obj.GetName(), Namespace, namespace)}
	namespaced, err := c.IsObjectNamespaced(obj)
	if namespaced {
		key.Namespace = namespace
	}
	return key, err
}

// Update is the step that reads obj (by its kind, from the run's namespace, by name:
// Namespace),
// applies change to it and writes it back, again on a conflict: a person's edit of
// the spec.
func Update(name string, obj client.Object, change func(client.Object)) Step {
	return Step{
		Name: fmt.Sprintf("update %s %s: %s", kindOf(obj), obj.GetName(), name),
		Do: func(ctx context.Context, c client.Client, namespace string) error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				o := obj.DeepCopyObject().(client.Object)
				key, err := keyInRun(c, o, namespace)
				if err != nil {
					return err
				}
				if err := c.Get(ctx, key, o); err != nil {
					return err
				}
				change(o)
				return c.Update(ctx, o)
			})
		},
	}
}

// Delete is the step that deletes objs from the run's namespace, by name (Namespace), at once; the
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
				o, err := inRun(c, obj, namespace)
				if err != nil {
					return err
				}
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
