package ownership_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// declared is the client of a declaration that owns no kind, as the reconcile shell's is
// without WithChildren.
type declared struct{ client.Client }

func (declared) DeclaredChildren() []schema.GroupVersionKind { return []schema.GroupVersionKind{} }

// A Writer filled in by hand with an empty Owns writes any kind: it has no declaration.
func TestAWriterFilledInByHandWithoutOwnsWritesAnyKind(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", UID: "6b1d"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(owner).Build()
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"}}
	if _, _, err := ownership.Ensure(t.Context(), ownership.Writer{Client: c, FieldOwner: "shop-operator"}, owner, child); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(child), &corev1.Secret{}); err != nil {
		t.Errorf("the Secret was not created: %v", err)
	}
}

// A Writer that cannot write right is refused before anything is sent, with a message that
// names the fix: no field owner, or a child of a kind it does not own.
func TestAWriterRefusesWhatItCannotWriteNamingTheFix(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", UID: "6b1d"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(owner).Build()
	child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart"}}
	deployments := []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment")}
	for _, tc := range []struct {
		name string
		w    ownership.Writer
		want []string
	}{
		{"no field owner", ownership.Writer{Client: c}, []string{"without a field owner", "set Writer.FieldOwner", "reconcile.Scope"}},
		{"a kind it does not own", ownership.Writer{Client: c, FieldOwner: "shop-operator", Owns: deployments},
			[]string{"Secret cart is of a kind the controller does not own (it owns Deployment)", "reconcile.WithChildren(&appsv1.Deployment{}, &corev1.Secret{})"}},
		{"a declaration's client that owns none", ownership.Writer{Client: declared{c}, FieldOwner: "shop-operator"},
			[]string{"Secret cart is of a kind the controller does not own (it owns none)", "reconcile.WithChildren(&corev1.Secret{})"}},
		{"a declaration's client, whatever Owns says", ownership.Writer{Client: declared{c}, FieldOwner: "shop-operator", Owns: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret")}},
			[]string{"(it owns none)", "reconcile.WithChildren(&corev1.Secret{})"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, ensured := ownership.Ensure(t.Context(), tc.w, owner, child)
			_, deleted := ownership.Delete(t.Context(), tc.w, owner, child)
			for _, err := range []error{ensured, deleted} {
				if undeclared := tc.w.FieldOwner != ""; ownership.IsUndeclared(err) != undeclared {
					t.Errorf("IsUndeclared(%v) = %t, want %t", err, !undeclared, undeclared)
				}
				for _, want := range tc.want {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("error %v, want one that says %q", err, want)
					}
				}
			}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(child), &corev1.Secret{}); err == nil {
				t.Error("the Secret was created")
			}
		})
	}
}
