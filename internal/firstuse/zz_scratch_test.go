package firstuse_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestScratch(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	cfg := cp.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "x"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	root := checkout(t)
	env := []string{"KUBECONFIG=" + path, "MAKEFLAGS="}
	t.Log(run(t, root, env, "make", "deploy", "EXAMPLE=podset", "IMG=registry.example/podset:v1"))
	t.Log(run(t, root, env, "kubectl", "get", "deploy,sa,crd", "-A"))
	t.Log(run(t, root, env, "make", "undeploy", "EXAMPLE=podset"))
	t.Log(run(t, root, env, "make", "install", "EXAMPLE=at"))
	_ = os.Remove
}
