package controlplane_test

import (
	"context"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/controlplane"
)

// A program starts an API server, writes to it as an administrator, and hands a
// kubeconfig to kubectl or to an operator run beside it. Options{Nodes: 2} would start a
// cluster of two simulated nodes instead.
func Example() {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		log.Fatal(err) // names the command that builds missing binaries
	}
	defer cp.Stop()

	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	settings := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"greeting": "hello"},
	}
	if err := c.Create(ctx, settings); err != nil {
		log.Fatal(err)
	}

	kubeconfig, err := cp.KubeConfig("default")
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := clientcmd.Load(kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("kubeconfig namespace:", loaded.Contexts[loaded.CurrentContext].Namespace)
	fmt.Println("stored:", settings.Name, settings.Data["greeting"])
	// Output:
	// kubeconfig namespace: default
	// stored: settings hello
}
