package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// The children of a declaration are cached by ownership.OwnedByLabel (docs/ownership.md,
// "What the cache holds"): the Writer the shell gives the logic labels every child it
// creates or applies with the kind of its owner, and a Manager restricts the cache of each
// child kind to the objects so labelled, so that an operator that owns ConfigMaps caches its
// own ConfigMaps and not the cluster's. A kind is cached in full instead, as before, when a
// declaration of the manager also reads objects of it that are not its children: it
// reconciles the kind, references it (WithReferences), watches it (WithWatch), or says so
// (WithCacheAll); and a declared restriction of the kind (WithCache) replaces the default.

// WithCacheAll makes the manager cache every object of the given kinds that its cache
// options let it see, as controller-runtime does, rather than the controller's own children
// alone (ownership.OwnedByLabel): for a child kind the logic also reads objects of that it
// did not make, through the Scope's client, without declaring them (WithReferences or
// WithWatch cache a kind in full already). The children are labelled all the same. It is
// accepted by Setup, whose manager caches every kind in full anyway; a declaration of the
// same manager that restricts the kind otherwise (WithCache) is refused.
func WithCacheAll(kinds ...client.Object) Option {
	return func(o *options) {
		for _, kind := range kinds {
			o.wiring.caches = append(o.wiring.caches, cacheRule{kind: kind, all: true})
		}
	}
}

// ownedByValue is the value of ownership.OwnedByLabel on the children of an owner of kind
// gk: the lower-case kind and its group, as kubectl names a kind (memcached.cache.example.com).
// A label value holds 63 characters at most; a longer one keeps its first 54 and a hash of
// the whole.
func ownedByValue(gk schema.GroupKind) string {
	v := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		v += "." + gk.Group
	}
	if len(v) <= 63 {
		return v
	}
	h := fnv.New32a()
	h.Write([]byte(v))
	return fmt.Sprintf("%s-%08x", strings.TrimRight(v[:54], "-."), h.Sum32())
}

// childLabel is the label of the children of one kind of owner.
type childLabel struct {
	owner  schema.GroupKind
	labels map[string]string // ownership.OwnedByLabel's, or none
}

// childLabelOf returns the label of the children of obj's kind, none when the scheme does
// not know it (a declaration refused elsewhere).
func childLabelOf(obj client.Object, scheme *runtime.Scheme) childLabel {
	if scheme == nil {
		return childLabel{}
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return childLabel{}
	}
	return childLabel{owner: gvk.GroupKind(), labels: map[string]string{ownership.OwnedByLabel: ownedByValue(gvk.GroupKind())}}
}

// labellingClient gives the label of the children of its owner's kind to every object it
// creates or updates that an owner of that kind controls: the children the logic writes
// with the Scope's client itself, not with Ensure (which gives them the Writer's labels),
// would otherwise be out of a cache restricted by the label, and a logic that reads its
// child from the cache before it creates it would create it again, and again.
type labellingClient struct {
	client.Client
	childLabel
}

// Create creates obj, labelled if it is a child.
func (c labellingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.label(obj)
	return c.Client.Create(ctx, obj, opts...)
}

// Update updates obj, labelled if it is a child: one made before the label, say, that the
// logic read live.
func (c labellingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.label(obj)
	return c.Client.Update(ctx, obj, opts...)
}

// label gives obj the label when its controller is of the owner's kind.
func (c labellingClient) label(obj client.Object) {
	ref := metav1.GetControllerOfNoCopy(obj)
	if len(c.labels) == 0 || ref == nil || ref.Kind != c.owner.Kind {
		return
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != c.owner.Group {
		return
	}
	all := obj.GetLabels()
	for k, v := range c.labels {
		if all[k] == v {
			continue
		}
		if all == nil {
			all = make(map[string]string, len(c.labels))
		}
		all[k] = v
	}
	obj.SetLabels(all)
}

// ownedKind is a child kind cached by ownership.OwnedByLabel: the kind, and the label's
// values, one for each kind of owner among the declarations, with the field owner that
// labels a child of each (adopt).
type ownedKind struct {
	kind   client.Object
	owners map[schema.GroupKind]ownedBy
}

type ownedBy struct {
	value, fieldOwner string
}

// selector selects the children of every owner of the kind.
func (k ownedKind) selector() labels.Selector {
	values := make([]string, 0, len(k.owners))
	for _, o := range k.owners {
		values = append(values, o.value)
	}
	slices.Sort(values)
	values = slices.Compact(values)
	req, err := labels.NewRequirement(ownership.OwnedByLabel, selection.In, values)
	if err != nil {
		return labels.Everything() // a value ownedByValue made is valid
	}
	return labels.NewSelector().Add(*req)
}

// ownedKinds returns the child kinds of ds that a manager caches by ownership.OwnedByLabel,
// in the order declared: every kind some declaration owns (WithChildren), except the kinds
// that a declaration of ds reconciles, references, watches, restricts or caches in full
// (WithCache, WithCacheAll) or declares optional (WithOptional: a kind whose CRD may be
// absent keeps the cache controller-runtime gives it); and except unstructured and
// metadata-only kinds, whose one Go type the cache's restrictions cannot tell apart.
func ownedKinds(ds []Declaration, scheme *runtime.Scheme) []ownedKind {
	full := map[reflect.Type]bool{}
	for _, d := range ds {
		w := d.options().wiring
		full[reflect.TypeOf(d.Object())] = true
		for _, k := range w.referenced {
			full[reflect.TypeOf(k)] = true
		}
		for _, k := range w.watches {
			full[reflect.TypeOf(k.kind)] = true
		}
		for _, r := range w.caches {
			full[reflect.TypeOf(r.kind)] = true
		}
		for _, k := range w.optional {
			full[reflect.TypeOf(k)] = true
		}
	}
	var out []ownedKind
	for _, d := range ds {
		gvk, err := apiutil.GVKForObject(d.Object(), scheme)
		if err != nil {
			continue // refused by check
		}
		owner := ownedBy{value: ownedByValue(gvk.GroupKind()), fieldOwner: d.options().fieldOwner}
		for _, child := range d.Children() {
			t := reflect.TypeOf(child)
			if full[t] || isGeneric(child) {
				continue
			}
			i := slices.IndexFunc(out, func(k ownedKind) bool { return reflect.TypeOf(k.kind) == t })
			if i < 0 {
				out = append(out, ownedKind{kind: child, owners: map[schema.GroupKind]ownedBy{}})
				i = len(out) - 1
			}
			out[i].owners[gvk.GroupKind()] = owner
		}
	}
	return out
}

// adoptPageSize is how many objects one page of adopt's list holds.
const adoptPageSize = 500

// adopter labels, once as the manager starts (on the leader), the children made before
// ownership.OwnedByLabel was given (by an older version of the operator) or stripped of it
// while the operator was down: the cache of their kind, restricted by the label, does not
// hold them, and Delete, EnsureSet and every list of the logic would not find them. Ensure
// finds an unlabelled child of the name it ensures by a live read on its own; this finds
// the others. An object is labelled when its controller is of a kind that owns its kind in
// the manager, whatever the owner's name: the owner's reconcile decides what becomes of it,
// as of any child. Objects controlled by anything else, or by nothing, are left alone.
type adopter struct {
	reader     client.Reader // the API server's, uncached
	writer     client.Client
	kinds      []ownedKind
	namespaces func(kind client.Object) []string
	log        logr.Logger
}

// Start lists, for each kind, the objects without the label (their metadata alone, by
// pages) and labels those controlled by an owner of a declared kind. A failure is logged,
// not returned, which would stop the manager: the operator runs as before, its unlabelled
// children found by Ensure alone.
func (a adopter) Start(ctx context.Context) error {
	log := a.log
	for _, k := range a.kinds {
		n, err := a.adopt(ctx, k)
		if err != nil {
			log.Error(err, "labelling the children made before the cache was restricted to them failed: those Ensure does not write again stay out of the cache", "kind", goName(k.kind), "label", ownership.OwnedByLabel)
		}
		if n > 0 {
			log.Info("labelled children made before the cache was restricted to them", "kind", goName(k.kind), "label", ownership.OwnedByLabel, "count", n)
		}
	}
	return nil
}

// adopt labels the unlabelled children of one kind and returns how many it labelled.
func (a adopter) adopt(ctx context.Context, k ownedKind) (int, error) {
	gvk, err := apiutil.GVKForObject(k.kind, a.writer.Scheme())
	if err != nil {
		return 0, err
	}
	unlabelled, err := labels.NewRequirement(ownership.OwnedByLabel, selection.DoesNotExist, nil)
	if err != nil {
		return 0, err
	}
	sel := labels.NewSelector().Add(*unlabelled)
	n := 0
	for _, ns := range a.namespaces(k.kind) {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		for cont := ""; ; {
			if err := a.reader.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}, client.Limit(adoptPageSize), client.Continue(cont)); err != nil {
				return n, err
			}
			for i := range list.Items {
				obj := &list.Items[i]
				ref := metav1.GetControllerOfNoCopy(obj)
				if ref == nil {
					continue
				}
				gv, err := schema.ParseGroupVersion(ref.APIVersion)
				if err != nil {
					continue
				}
				owner, ok := k.owners[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
				if !ok {
					continue
				}
				obj.SetGroupVersionKind(gvk)
				patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{ownership.OwnedByLabel: owner.value}}})
				if err != nil {
					return n, err
				}
				if err := a.writer.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(owner.fieldOwner)); err != nil {
					if apierrors.IsNotFound(err) {
						continue
					}
					return n, err
				}
				n++
			}
			if cont = list.GetContinue(); cont == "" {
				break
			}
		}
	}
	return n, nil
}

// cacheNamespaces returns the namespaces the cache of opts watches kind in, for a list of
// the same objects: the kind's own (ByObject), else the default ones, else all ("").
func cacheNamespaces(opts cache.Options) func(kind client.Object) []string {
	return func(kind client.Object) []string {
		if _, by, ok := findByObject(opts.ByObject, kind); ok && len(by.Namespaces) > 0 {
			return sortedKeys(by.Namespaces)
		}
		if len(opts.DefaultNamespaces) > 0 {
			return sortedKeys(opts.DefaultNamespaces)
		}
		return []string{""}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// addAdopter adds to mgr, made by Manager.New with opts, the labelling of the unlabelled
// children of kinds, run on the leader as it starts.
func addAdopter(mgr manager.Manager, opts cache.Options, kinds []ownedKind) error {
	if len(kinds) == 0 {
		return nil
	}
	return mgr.Add(adopter{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), kinds: kinds, namespaces: cacheNamespaces(opts), log: mgr.GetLogger().WithName("adopt-children")})
}

// uncachedChildren names, for Setup's log, the child kinds of ds that a manager made by
// Manager would cache by ownership.OwnedByLabel and a manager made by the project caches
// in full.
func uncachedChildren(ds []Declaration, scheme *runtime.Scheme) []string {
	var names []string
	for _, k := range ownedKinds(ds, scheme) {
		names = append(names, goName(k.kind)+" by "+k.selector().String())
	}
	return names
}
