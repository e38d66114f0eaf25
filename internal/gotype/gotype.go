// Package gotype names Go types in messages as the code that fixes them spells them: with
// the conventional import names (corev1.ConfigMap, appsv1.Deployment, batchv1.Job), where
// %T prints the package's own name (v1.ConfigMap), which a reader cannot paste, and which
// does not tell core from apps.
package gotype

import (
	"path"
	"reflect"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// version matches a package named for an API version: v1, v1beta1, v2alpha3.
var version = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// Name names the type of obj (of what it points to, for a pointer) as a declaration
// spells it, such as corev1.ConfigMap. A package named for an API version gets the
// conventional import name: given a scheme that knows the type, its API group's first
// label and version (corev1 for the core group, cachev1beta1 for cache.example.com/v1beta1);
// else, for Kubernetes' own packages, the directory above and version
// (k8s.io/api/apps/v1: appsv1; .../apis/meta/v1: metav1). Any other package, and an
// operator's own API package that the scheme does not know, is named by its package name.
// scheme may be nil.
func Name(obj any, scheme *runtime.Scheme) string {
	t := reflect.TypeOf(obj)
	if t == nil {
		return "nil"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" || t.PkgPath() == "" {
		return t.String()
	}
	pkg := path.Base(t.PkgPath())
	if !version.MatchString(pkg) {
		return strings.SplitN(t.String(), ".", 2)[0] + "." + t.Name()
	}
	if o, ok := reflect.New(t).Interface().(runtime.Object); ok && scheme != nil {
		if gvk, err := apiutil.GVKForObject(o, scheme); err == nil {
			return OfKind(gvk.GroupVersion().WithKind(t.Name()))
		}
	}
	if parent := path.Base(path.Dir(t.PkgPath())); strings.HasPrefix(t.PkgPath(), "k8s.io/") && parent != "api" && parent != "apis" {
		return parent + pkg + "." + t.Name()
	}
	return pkg + "." + t.Name()
}

// OfKind names the Go type of a kind as a declaration spells it by convention, its package
// imported as its API group's first label and its version: corev1.ConfigMap, batchv1.Job,
// cachev1alpha1.Memcached (of cache.example.com).
func OfKind(gvk schema.GroupVersionKind) string {
	group, _, _ := strings.Cut(gvk.Group, ".")
	if group == "" {
		group = "core"
	}
	return group + gvk.Version + "." + gvk.Kind
}
