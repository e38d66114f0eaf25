package ownership_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/workload"
)

// A refusal of a call of the package names, in one marker, exactly the verbs the call
// needs on the kind and the role lacks, one verb or several, so that one change of the
// role is the whole fix; and the owner's finalizers when blockOwnerDeletion is what was
// refused.
func TestARefusalNamesEveryVerbTheCallNeedsAndTheRoleLacks(t *testing.T) {
	admin, err := client.New(cp(t).Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"get", "list", "watch", "create", "patch", "delete"}
	except := func(missing ...string) []string {
		var granted []string
		for _, v := range all {
			if !contains(missing, v) {
				granted = append(granted, v)
			}
		}
		return granted
	}
	type call func(ctx context.Context, w ownership.Writer, owner *corev1.ConfigMap) error
	ensure := func(ctx context.Context, w ownership.Writer, owner *corev1.ConfigMap) error {
		_, _, err := ownership.Ensure(ctx, w, owner, statefulSet(owner.Namespace, "app:1"))
		return err
	}
	for i, tc := range []struct {
		name        string
		statefulSet []string // the verbs granted on StatefulSets
		finalizers  bool     // update on the owner's finalizers is granted
		exists      bool     // the StatefulSet exists, owned, with another image
		call        call
		want        string // the marker
	}{{
		name: "Ensure lacking create", statefulSet: except("create"), finalizers: true, call: ensure,
		want: `// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=create`,
	}, {
		name: "Ensure lacking patch", statefulSet: except("patch"), finalizers: true, exists: true, call: ensure,
		want: `// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=patch`,
	}, {
		name: "Ensure lacking get, create and patch", statefulSet: except("get", "create", "patch"), finalizers: true, call: ensure,
		want: `// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;create;patch`,
	}, {
		name: "Ensure of a kind with no rule", finalizers: true, call: ensure,
		want: `// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch`,
	}, {
		name: "Ensure that may not set blockOwnerDeletion", statefulSet: all, call: ensure,
		want: `// +kubebuilder:rbac:groups="",resources=configmaps/finalizers,verbs=update`,
	}, {
		name: "Delete lacking delete", statefulSet: except("delete"), finalizers: true, exists: true,
		call: func(ctx context.Context, w ownership.Writer, owner *corev1.ConfigMap) error {
			_, err := ownership.Delete(ctx, w, owner, statefulSet(owner.Namespace, "app:0"))
			return err
		},
		want: `// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=delete`,
	}, {
		name: "EnsureSet lacking create and delete", statefulSet: except("create", "delete"), finalizers: true,
		call: func(ctx context.Context, w ownership.Writer, owner *corev1.ConfigMap) error {
			_, err := ownership.EnsureSet(ctx, w, owner, &appsv1.StatefulSetList{}, map[string]string{"set": "web"},
				[]*appsv1.StatefulSet{statefulSet(owner.Namespace, "app:1")})
			return err
		},
		want: `// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=create;delete`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			ns := cp(t).Namespace(t)
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
			if err := admin.Create(ctx, owner); err != nil {
				t.Fatal(err)
			}
			if tc.exists {
				old := statefulSet(ns, "app:0")
				old.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
				if err := admin.Create(ctx, old); err != nil {
					t.Fatal(err)
				}
			}
			role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("forbidden-%d", i)},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
			if len(tc.statefulSet) > 0 {
				role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: tc.statefulSet})
			}
			if tc.finalizers {
				role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps/finalizers"}, Verbs: []string{"update"}})
			}
			if err := admin.Create(ctx, role); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = admin.Delete(context.Background(), role) })
			c, err := client.New(cp(t).ConfigFor(t, role.Name, role.Name), client.Options{Scheme: scheme.Scheme})
			if err != nil {
				t.Fatal(err)
			}

			err = tc.call(ctx, ownership.NewTestWriter(c), owner)
			var forbidden *ownership.ForbiddenError
			if !errors.As(err, &forbidden) {
				t.Fatalf("the error %v is no *ForbiddenError", err)
			}
			if !apierrors.IsForbidden(err) {
				t.Errorf("apierrors.IsForbidden(%v) = false", err)
			}
			t.Logf("%v", err)
			if got := forbidden.Marker(); got != tc.want {
				t.Errorf("the marker is\n\t%s\nwant\n\t%s\nthe error: %v", got, tc.want, err)
			}
		})
	}
}

func statefulSet(namespace, image string) *appsv1.StatefulSet {
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
	}
	return workload.StatefulSet(namespace, "web", 1, template)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
