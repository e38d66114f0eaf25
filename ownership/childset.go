package ownership

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// SetResult is what EnsureSet did, by child name.
type SetResult[T client.Object] struct {
	// Children are the live desired children, in the order desired lists them; a child
	// Ensure failed on is left out.
	Children []T
	// Created, Updated and Deleted name the children EnsureSet created, updated and deleted,
	// in the order it acted on them.
	Created, Updated, Deleted []string
}

// Changed reports whether EnsureSet sent any write.
func (r SetResult[T]) Changed() bool {
	return len(r.Created)+len(r.Updated)+len(r.Deleted) > 0
}

// EnsureSet keeps a set of children of one kind, such as one per replica, shard or user:
// every desired child exists as Ensure makes it, and every other member of the set that
// owner controls is deleted. A member is an object of list's kind, in owner's namespace
// (any namespace for a cluster-scoped owner), that carries every label in labels.
//
// The rules:
//   - each desired child gets labels added (desired itself is not modified), so that what
//     EnsureSet creates is a member the next call finds; a desired child that has one of
//     those labels with another value, a name listed twice, or a list of another kind than
//     the children, is refused before anything is sent;
//   - each desired child goes through Ensure, with opts: created when missing, updated when
//     it drifted, left alone with a *NotControlledError when someone else controls it;
//   - the members are listed through c, normally the manager's cached client (no request);
//     each one owner controls (by UID) whose name is not desired is deleted as Delete does
//     (a UID precondition, background propagation, nothing sent for one already being
//     deleted). A member owner does not control is never touched, desired or not;
//   - an error on one child does not stop the others: the errors are joined, so
//     IsNotControlled(err) reports a foreign object in the set's way, and the result still
//     says what was done.
//
// So when the set has converged EnsureSet sends no request at all, and shrinking it sends
// one delete per child that goes. list is an empty list of the children's kind, such as
// &appsv1.DeploymentList{}; EnsureSet fills it. It needs Ensure's permissions and delete: a
// refusal returns a *ForbiddenError naming those the role lacks.
func EnsureSet[T client.Object](ctx context.Context, w Writer, owner client.Object, list client.ObjectList, labels map[string]string, desired []T, opts ...Option) (SetResult[T], error) {
	result, err := ensureSet(ctx, w, owner, list, labels, desired, opts...)
	return result, w.explainForbidden(ctx, err, owner, sample(list, owner, w), ensureSetVerbs)
}

// ensureSet is EnsureSet, whose refusals the caller explains.
func ensureSet[T client.Object](ctx context.Context, w Writer, owner client.Object, list client.ObjectList, labels map[string]string, desired []T, opts ...Option) (SetResult[T], error) {
	var result SetResult[T]
	c := w.Client
	if len(labels) == 0 {
		return result, errors.New("a child set needs at least one label: without one, every object of the kind would be a member")
	}
	wanted, keys, err := members(desired, labels)
	if err != nil {
		return result, err
	}
	if err := sameKind(w, list, wanted); err != nil {
		return result, err
	}

	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var errs []error
	for _, want := range wanted {
		live, r, err := ensure(ctx, w, owner, want, o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		result.Children = append(result.Children, live)
		switch r.Action {
		case Created:
			result.Created = append(result.Created, live.GetName())
		case Updated:
			result.Updated = append(result.Updated, live.GetName())
		}
	}

	listOpts := []client.ListOption{client.MatchingLabels(labels)}
	if owner.GetNamespace() != "" {
		listOpts = append(listOpts, client.InNamespace(owner.GetNamespace()))
	}
	if err := c.List(ctx, list, listOpts...); err != nil {
		return result, errors.Join(append(errs, fmt.Errorf("listing the child set: %w", err))...)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return result, errors.Join(append(errs, err)...)
	}
	for _, item := range items {
		member, ok := item.(client.Object)
		if !ok || !IsControlledBy(member, owner) || keys.Has(client.ObjectKeyFromObject(member)) {
			continue
		}
		r, err := deleteControlled(ctx, c, member)
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting %s/%s: %w", member.GetNamespace(), member.GetName(), err))
			continue
		}
		if r.Action == Deleted {
			result.Deleted = append(result.Deleted, member.GetName())
		}
	}
	return result, errors.Join(errs...)
}

// sample is an empty member of the set of list's kind, in owner's namespace, whose kind a
// refusal names; nil if list's kind is unknown.
func sample(list client.ObjectList, owner client.Object, w Writer) client.Object {
	if w.Client == nil {
		return nil
	}
	gvk, err := apiutil.GVKForObject(list, w.Client.Scheme())
	if err != nil {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
	u.SetNamespace(owner.GetNamespace())
	return u
}

// sameKind refuses a list of another kind than the desired children, since pruning its
// members would delete children of that other kind, and children w may not write.
func sameKind[T client.Object](w Writer, list client.ObjectList, wanted []T) error {
	if w.Client == nil {
		return fmt.Errorf("ownership: the Writer has no Client")
	}
	listGVK, err := apiutil.GVKForObject(list, w.Client.Scheme())
	if err != nil {
		return err
	}
	for _, want := range wanted {
		gvk, err := w.check(want)
		if err != nil {
			return err
		}
		if gvk.Group != listGVK.Group || gvk.Kind+"List" != listGVK.Kind {
			return fmt.Errorf("the child set lists %s but its children are %s", listGVK.Kind, gvk.Kind)
		}
	}
	return nil
}

// members returns copies of desired carrying labels and their keys, or an error when one
// cannot be a member or two are the same object.
func members[T client.Object](desired []T, labels map[string]string) ([]T, sets.Set[client.ObjectKey], error) {
	out := make([]T, 0, len(desired))
	keys := make(sets.Set[client.ObjectKey], len(desired))
	for _, d := range desired {
		key := client.ObjectKeyFromObject(d)
		if keys.Has(key) {
			return nil, nil, fmt.Errorf("the child set lists %s twice", key)
		}
		keys.Insert(key)
		m := d.DeepCopyObject().(T)
		l := m.GetLabels()
		if l == nil {
			l = make(map[string]string, len(labels))
		}
		for k, v := range labels {
			if have, ok := l[k]; ok && have != v {
				return nil, nil, fmt.Errorf("desired child %s/%s has label %s=%q, not the set's %q: it would never be found in the set", d.GetNamespace(), d.GetName(), k, have, v)
			}
			l[k] = v
		}
		m.SetLabels(l)
		out = append(out, m)
	}
	return out, keys, nil
}
