//go:build kubectl

// The plugin run through kubectl itself, which `make kubectl` builds from source: a target
// of its own (`make test-kubectl`), so that `make test` does not build kubectl.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/explain"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// TestKubectlRunsThePlugin runs `kubectl reconcilekit explain` through kubectl of the
// control plane's version, built by `make kubectl`, with the plugin on the PATH, on a
// Deployment that no operator owns whose image cannot be pulled: any object that speaks
// kstatus is explained.
func TestKubectlRunsThePlugin(t *testing.T) {
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("no kubectl in KUBEBUILDER_ASSETS: run `make test-kubectl`, which builds it first (%v)", err)
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-reconcilekit"), ".").CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	cluster := reconciletest.StartCluster(t, 1)
	kubeconfig := writeKubeconfig(t, cluster)
	ns := cluster.Namespace(t)
	c := cluster.Client(t, nil)
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:" + reconciletest.BadImageTag}}},
			},
		},
	}
	if err := c.Create(t.Context(), dep); err != nil {
		t.Fatal(err)
	}

	plugin := func(ctx context.Context, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"reconcilekit", "explain"}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("kubectl reconcilekit explain %s: %w: %s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out), nil
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		var pods corev1.PodList
		var sets appsv1.ReplicaSetList
		if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		if err := c.List(ctx, &sets, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(pods.Items) != 1 || len(sets.Items) != 1 {
			return fmt.Errorf("%d pods and %d ReplicaSets; want one of each", len(pods.Items), len(sets.Items))
		}
		pod, rs := pods.Items[0].Name, sets.Items[0].Name
		want := []string{
			"Pod " + pod + ": ImagePullBackOff (image app:nope) -> ReplicaSet " + rs + ": Progressing (Available: 0/1) -> Deployment web: Progressing (Available: 0/1)",
			"  Warning Failed on Pod " + pod + ": Error: ImagePullBackOff",
		}
		out, err := plugin(ctx, "deploy/web", "-n", ns)
		if err != nil {
			return err
		}
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, want) {
			return fmt.Errorf("printed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
		}
		return nil
	})

	// A cluster-scoped object, by its short name: its children are looked for in every
	// namespace.
	out, err := plugin(t.Context(), "ns/"+ns)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Namespace " + ns + ": Current\n"; out != want {
		t.Errorf("explain ns/%s printed %q; want %q", ns, out, want)
	}

	// For tools, with the flags before the object.
	out, err = plugin(t.Context(), "--namespace", ns, "-o", "json", "deployments.apps/web")
	if err != nil {
		t.Fatal(err)
	}
	var r explain.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if len(r.Chains) != 1 || len(r.Chains[0]) != 3 || r.Chains[0][0].State != "ImagePullBackOff" || r.Chains[0][2].Kind != "Deployment" {
		t.Errorf("-o json: chains %+v; want Pod, ReplicaSet, Deployment\n%s", r.Chains, out)
	}
}

// writeKubeconfig writes an administrator's kubeconfig of the cluster, as kubectl reads it.
func writeKubeconfig(t *testing.T, cluster *reconciletest.ControlPlane) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := cluster.Config
	err := clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"test": {Server: cfg.Host, CertificateAuthorityData: cfg.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"test": {ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{"test": {Cluster: "test", AuthInfo: "test"}},
		CurrentContext: "test",
	}, path)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
