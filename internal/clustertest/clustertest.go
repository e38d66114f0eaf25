// Package clustertest is the frame the library's own packages share when their tests run
// against one control plane a package: the TestMain that starts and stops it, and the
// counted client, namespace and owner most of those tests begin from.
package clustertest

import (
	"context"
	"fmt"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// Main starts a control plane with opts, sets *cp to it, runs the package's tests and
// stops it, and returns the exit code for os.Exit. A control plane that does not start,
// or does not stop, is a failure with its reason on stderr.
func Main(m *testing.M, opts reconciletest.Options, cp **reconciletest.ControlPlane) int {
	var err error
	if *cp, err = reconciletest.Start(context.Background(), opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := (*cp).Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	return code
}

// Setup returns a client of cp counted by the returned Counter, and a ConfigMap "owner"
// in a namespace of the test's own; the owner's create is not counted.
func Setup(t *testing.T, cp *reconciletest.ControlPlane) (client.WithWatch, *reconciletest.Counter, *corev1.ConfigMap) {
	t.Helper()
	counter := &reconciletest.Counter{}
	c, err := client.NewWithWatch(counter.Wrap(cp.Config), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cp.Namespace(t), Name: "owner"}}
	if err := c.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	return c, counter, owner
}

// Writer is an ownership.Writer of c with the tests' field manager.
func Writer(c client.Client) ownership.Writer {
	return ownership.Writer{Client: c, FieldOwner: "reconcilekit-test"}
}

// Deployment is the Deployment "web" of two replicas of PodTemplate in owner's namespace.
func Deployment(owner client.Object) *appsv1.Deployment {
	return workload.Deployment(owner.GetNamespace(), "web", 2, PodTemplate())
}

// PodTemplate is the pods of the tests' workloads: one busybox container, labelled
// app=web, with a port.
func PodTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "busybox", Command: []string{"sleep", "3600"},
			Ports: []corev1.ContainerPort{{ContainerPort: 1234}},
		}}},
	}
}
