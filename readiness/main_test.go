package readiness_test

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

var cp *reconciletest.ControlPlane

func TestMain(m *testing.M) {
	var err error
	cp, err = reconciletest.Start(context.Background(), reconciletest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// setup returns a client counted by the returned Counter, a namespace and an owner in it.
func setup(t *testing.T) (client.WithWatch, *reconciletest.Counter, *corev1.ConfigMap) {
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

func desired(owner client.Object) *appsv1.Deployment {
	return workload.Deployment(owner.GetNamespace(), "web", 2, template())
}

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "busybox", Command: []string{"sleep", "3600"},
			Ports: []corev1.ContainerPort{{ContainerPort: 1234}},
		}}},
	}
}

// testWriter returns a Writer of c as the tests' field manager.
func testWriter(c client.Client) ownership.Writer {
	return ownership.Writer{Client: c, FieldOwner: "reconcilekit-test"}
}
