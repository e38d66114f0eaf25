// Package clustertest is the frame the library's own packages share when their tests run
// against one control plane a package, started by the first test that needs it and
// stopped by TestMain, and the counted client, namespace and owner most of those tests
// begin from.
package clustertest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// Lazy is the control plane a package's tests share, started by the first test that
// asks for it (Get) rather than by TestMain, so that the package's tests that need none
// run without one, and under -short (the fast tier) without its binaries.
type Lazy struct {
	// Options are the control plane's.
	Options reconciletest.Options

	once sync.Once
	cp   *reconciletest.ControlPlane
	err  error
}

// Get returns the control plane, starting it on the first call. Under -short it skips
// t instead (fasttier.Skip); a control plane that does not start fails t, and
// every later caller, with its reason, which names the command that builds a missing
// binary.
func (l *Lazy) Get(t testing.TB) *reconciletest.ControlPlane {
	t.Helper()
	fasttier.Skip(t)
	l.once.Do(func() { l.cp, l.err = reconciletest.Start(context.Background(), l.Options) })
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.cp
}

// Main runs the package's tests and stops the control plane if one started, and returns
// the exit code for os.Exit: the whole TestMain of a package whose tests share a Lazy. A
// control plane that does not stop is a failure with its reason on stderr.
func (l *Lazy) Main(m *testing.M) int {
	code := m.Run()
	if l.cp != nil {
		if err := l.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
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
