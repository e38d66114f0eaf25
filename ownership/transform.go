package ownership

import (
	"maps"
	"strings"
	"sync"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// TransformCompact returns a cache transform (a manager's cache.Options.DefaultTransform)
// that makes each cached object smaller without changing what a reader of the cache sees:
//
//   - managedFields are dropped, as controller-runtime's TransformStripManagedFields does:
//     no controller reads them, and they are often a third of an object;
//   - in a Deployment, StatefulSet, DaemonSet or ReplicaSet, the selector's matchLabels and
//     the pod template's labels become the same map as the object's own labels when they are
//     equal, as they are when Deployment builds the object: one map instead of three (two
//     when the object has labels of its own besides, such as OwnedByLabel); so do
//     a Service's selector and a PodDisruptionBudget's matchLabels (HeadlessService,
//     PodDisruptionBudget): one map instead of two;
//   - the strings every object repeats (its namespace, its labels' and annotations' keys,
//     its owners' apiVersion and kind, its finalizers) become one copy shared by every
//     object, where the decoder made one for each: about 25 bytes a string an object.
//
// Sharing is safe because nothing changes a cached object: the manager's client hands out
// deep copies, and a deep copy gets maps of its own. It is not safe in a cache read with
// UnsafeDisableDeepCopy by code that changes what it reads.
func TransformCompact() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		in, err := strip(in)
		if err != nil {
			return nil, err
		}
		if obj, ok := in.(metav1.Object); ok {
			shareStrings(obj)
		}
		switch w := in.(type) {
		case *appsv1.Deployment:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		case *appsv1.StatefulSet:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		case *appsv1.DaemonSet:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		case *appsv1.ReplicaSet:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		case *policyv1.PodDisruptionBudget:
			shareLabels(w.Labels, w.Spec.Selector, nil)
		case *corev1.Service:
			w.Spec.Selector = equalOr(w.Labels, w.Spec.Selector)
		}
		return in, nil
	}
}

// shareLabels points the selector's and the template's labels, when there is a template, at
// an equal map met before: the object's own labels, or else the selector's. A child the
// reconcile shell writes has one label more than its selector and template
// (OwnedByLabel, which its pods must not get): those two then share a map of their own.
func shareLabels(own map[string]string, selector *metav1.LabelSelector, template *map[string]string) {
	if selector != nil {
		selector.MatchLabels = equalOr(own, selector.MatchLabels)
		if len(own) == 0 || !maps.Equal(own, selector.MatchLabels) {
			own = selector.MatchLabels
		}
	}
	if template != nil {
		*template = equalOr(own, *template)
	}
}

// equalOr returns own when m is equal to it and neither is empty, else m.
func equalOr(own, m map[string]string) map[string]string {
	if len(m) > 0 && len(own) > 0 && maps.Equal(m, own) {
		return own
	}
	return m
}

// shareStrings makes obj's repeated strings the copies the table holds.
func shareStrings(obj metav1.Object) {
	if ns := obj.GetNamespace(); ns != "" {
		obj.SetNamespace(shared.get(ns))
	}
	shareKeys(obj.GetLabels())
	shareKeys(obj.GetAnnotations())
	refs := obj.GetOwnerReferences() // the object's slice: its elements are changed in place
	for i := range refs {
		refs[i].APIVersion, refs[i].Kind = shared.get(refs[i].APIVersion), shared.get(refs[i].Kind)
	}
	finalizers := obj.GetFinalizers()
	for i := range finalizers {
		finalizers[i] = shared.get(finalizers[i])
	}
}

// shareKeys makes m's keys the copies the table holds. Assigning to a key that is present
// stores the key given: Go replaces a string key on assignment (its bytes may live
// elsewhere), which the test checks.
func shareKeys(m map[string]string) {
	for k, v := range m {
		if c := shared.get(k); unsafe.StringData(c) != unsafe.StringData(k) {
			m[c] = v
		}
	}
}

// shared is the table of the strings the cached objects share. It is bounded, so that
// objects whose keys never repeat cannot grow it without end: once full, a string it does
// not hold stays the object's own.
var shared = &stringTable{strings: map[string]string{}, max: 4096}

type stringTable struct {
	mu      sync.RWMutex
	strings map[string]string
	max     int
}

// get returns the table's copy of s, adding one while the table has room.
func (t *stringTable) get(s string) string {
	t.mu.RLock()
	c, ok := t.strings[s]
	t.mu.RUnlock()
	if ok {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.strings[s]; ok {
		return c
	}
	if len(t.strings) >= t.max {
		return s
	}
	c = strings.Clone(s) // not a slice of a larger buffer the decoder made
	t.strings[c] = c
	return c
}
