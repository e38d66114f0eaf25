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
			[]string{"Secret cart is of a kind the controller does not own (it owns Deployment)", "reconcile.WithChildren(&v1.Secret{})"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, ensured := ownership.Ensure(t.Context(), tc.w, owner, child)
			_, deleted := ownership.Delete(t.Context(), tc.w, owner, child)
			for _, err := range []error{ensured, deleted} {
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
