package reconciletest_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// A program starts a cluster of two simulated nodes, counts the requests of a client,
// and watches a Deployment roll out. Tests call StartCluster instead, which stops the
// cluster when the test ends.
func Example() {
	ctx := context.Background()
	cp, err := reconciletest.Start(ctx, reconciletest.Options{Nodes: 2})
	if err != nil {
		log.Fatal(err) // names the command that builds missing binaries
	}
	defer cp.Stop()

	var requests reconciletest.Counter
	c, err := client.New(requests.Wrap(cp.Config), client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if err := c.Create(ctx, web); err != nil {
		log.Fatal(err)
	}
	fmt.Println(requests.Count("create", "deployments"), "create")
	// The controller manager, the scheduler and kwok take it from here: about a second
	// later, three pods run on the simulated nodes.
}

// Every update of a ConfigMap fails with a conflict, as if another writer had got there
// first; the request never reaches a server. An operator run with such a config shows
// whether it retries quietly or reports an error.
func ExampleFaults() {
	faults := &reconciletest.Faults{
		Verbs:     []string{"update"},
		Resources: []string{"configmaps"},
		Rate:      1,
		Code:      http.StatusConflict,
	}
	clientset := kubernetes.NewForConfigOrDie(faults.Wrap(&rest.Config{Host: "https://127.0.0.1:1"}))

	_, err := clientset.CoreV1().ConfigMaps("default").Update(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.UpdateOptions{})

	fmt.Println(apierrors.IsConflict(err), faults.Injected())
	// Output: true 1
}

// A hook sees each request named as the API server's authorizer names it, and answers
// it itself here: the ConfigMap is gone, as far as the client can tell. A hook that
// passes a request on calls r.Send instead, and may look at the answer.
func ExampleIntercept() {
	cfg := reconciletest.Intercept(&rest.Config{Host: "https://127.0.0.1:1"}, func(r *reconciletest.Request) (*http.Response, error) {
		fmt.Println(r.Verb, r.Resource, r.Namespace, r.Name)
		return r.Fail(http.StatusNotFound, "gone"), nil
	})
	clientset := kubernetes.NewForConfigOrDie(cfg)

	_, err := clientset.CoreV1().ConfigMaps("default").Get(context.Background(), "settings", metav1.GetOptions{})

	fmt.Println(apierrors.IsNotFound(err))
	// Output:
	// get configmaps default settings
	// true
}
