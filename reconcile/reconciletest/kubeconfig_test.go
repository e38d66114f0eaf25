package reconciletest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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
