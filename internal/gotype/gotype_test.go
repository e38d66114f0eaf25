package gotype_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/internal/gotype"
)

// widget is a type of a package not named for a version.
type widget struct{}

func TestNameSpellsTheConventionalImportName(t *testing.T) {
	known := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "gadgets.example.com", Version: "v1beta1"}
	known.AddKnownTypes(gv, &v1beta1.Gadget{})
	tests := []struct {
		name   string
		obj    any
		scheme *runtime.Scheme
		want   string
	}{
		{"a core type, not v1", &corev1.ConfigMap{}, nil, "corev1.ConfigMap"},
		{"an apps type, told from core", &appsv1.Deployment{}, nil, "appsv1.Deployment"},
		{"a batch type", &batchv1.Job{}, nil, "batchv1.Job"},
		{"a group with a domain", &rbacv1.ClusterRole{}, nil, "rbacv1.ClusterRole"},
		{"apimachinery's meta", metav1.ObjectMeta{}, nil, "metav1.ObjectMeta"},
		{"apiextensions", &apiextensionsv1.CustomResourceDefinition{}, nil, "apiextensionsv1.CustomResourceDefinition"},
		{"a core type by the scheme", &corev1.Secret{}, scheme.Scheme, "corev1.Secret"},
		{"an operator's type by the scheme: its group's first label", &v1beta1.Gadget{}, known, "gadgetsv1beta1.Gadget"},
		{"an operator's type the scheme does not know: its package's name", &v1beta1.Gadget{}, nil, "v1beta1.Gadget"},
		{"a package not named for a version", &widget{}, nil, "gotype_test.widget"},
		{"nil", nil, nil, "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gotype.Name(tt.obj, tt.scheme); got != tt.want {
				t.Errorf("Name(%T) = %q, want %q", tt.obj, got, tt.want)
			}
		})
	}
}

func TestOfKindSpellsTheGroupsFirstLabelAndTheVersion(t *testing.T) {
	tests := []struct {
		gvk  schema.GroupVersionKind
		want string
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "corev1.ConfigMap"},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, "batchv1.Job"},
		{schema.GroupVersionKind{Group: "cache.example.com", Version: "v1alpha1", Kind: "Memcached"}, "cachev1alpha1.Memcached"},
	}
	for _, tt := range tests {
		if got := gotype.OfKind(tt.gvk); got != tt.want {
			t.Errorf("OfKind(%v) = %q, want %q", tt.gvk, got, tt.want)
		}
	}
}
