package ownership

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
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
//     equal, as they are when Deployment builds the object: one map instead of three.
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
		switch w := in.(type) {
		case *appsv1.Deployment:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		case *appsv1.StatefulSet:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		case *appsv1.DaemonSet:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		case *appsv1.ReplicaSet:
			shareLabels(w.Labels, w.Spec.Selector, &w.Spec.Template.Labels)
		}
		return in, nil
	}
}

// shareLabels points the selector's and the template's labels at an equal map met before:
// the object's own labels, or else the selector's.
func shareLabels(own map[string]string, selector *metav1.LabelSelector, template *map[string]string) {
	same := func(m map[string]string) map[string]string {
		if len(m) > 0 && len(own) > 0 && maps.Equal(m, own) {
			return own
		}
		return m
	}
	if selector != nil {
		selector.MatchLabels = same(selector.MatchLabels)
		if len(own) == 0 {
			own = selector.MatchLabels
		}
	}
	*template = same(*template)
}
