package reconciletest

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The kubeconfig of a control plane reaches its API server as an administrator, and its
// context works in the namespace given, as kubectl reads it.
func TestKubeConfigReachesTheAPIServerInTheNamespaceGiven(t *testing.T) {
	cp := StartAPIServer(t)
	ns := cp.RestrictedNamespace(t)
	raw, err := cp.KubeConfig(ns)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := clientcmd.NewClientConfigFromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := loaded.Namespace(); err != nil || got != ns {
		t.Errorf("the context's namespace is %q (%v); want %q", got, err, ns)
	}
	cfg, err := loaded.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var nodes corev1.NodeList // cluster-scoped: an administrator's read
	if err := c.List(t.Context(), &nodes); err != nil {
		t.Errorf("listing nodes with the kubeconfig: %v", err)
	}
}

// The kubeconfig, its user set to impersonate a service account bound to an operator's
// role (docs/getting-started.md, "kubectl config set users.envtest.as ..."), runs a
// program as that role alone: what it grants is allowed, anything else forbidden.
func TestKubeConfigImpersonatingAnOperatorRunsAsItsRole(t *testing.T) {
	cp := StartAPIServer(t)
	ns := cp.RestrictedNamespace(t)
	role, err := cp.CreateClusterRole(t.Context(), "testdata/role.yaml") // the labeler's: configmaps
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cp.client.Delete(context.Background(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}})
	})
	account := "system:serviceaccount:" + ns + ":labeler"
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "labeler-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "labeler"}}}
	if err := cp.client.Create(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.client.Delete(context.Background(), binding) })
	raw, err := cp.KubeConfig(ns)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	user, ok := kubeconfig.AuthInfos["envtest"]
	if !ok {
		t.Fatalf("the kubeconfig has no user envtest, which getting-started names; it has %v", kubeconfig.AuthInfos)
	}
	user.Impersonate = account // what kubectl config set users.envtest.as writes
	cfg, err := clientcmd.NewDefaultClientConfig(*kubeconfig, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, func(ctx context.Context) error { // until the binding takes effect
		return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns))
	})
	err = c.List(t.Context(), &corev1.SecretList{}, client.InNamespace(ns))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "`+account+`" cannot list resource "secrets"`) {
		t.Errorf("listing Secrets as the operator: %v; want it forbidden to %s", err, account)
	}
}
