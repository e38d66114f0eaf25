package reconciletest

import (
	"context"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespace creates a namespace for the test alone, named after it, and deletes it when
// the test ends. Tests that share a control plane stay out of each other's way by
// working in namespaces of their own.
func (cp *ControlPlane) Namespace(t testing.TB) string {
	t.Helper()
	return cp.namespace(t, nil)
}

// RestrictedNamespace is Namespace with the restricted Pod Security Standard enforced:
// the API server rejects a pod that may run as root, escalate privileges or keep Linux
// capabilities. An operator whose pods start there is fit for a hardened cluster.
func (cp *ControlPlane) RestrictedNamespace(t testing.TB) string {
	t.Helper()
	return cp.namespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
}

func (cp *ControlPlane) namespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: namePrefix(t.Name()),
		Labels:       labels,
	}}
	if err := cp.client.Create(t.Context(), ns); err != nil {
		t.Fatalf("reconciletest: creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		// Without a namespace controller (an API server alone) the namespace stays
		// Terminating; either way nothing waits for it.
		err := cp.client.Delete(context.Background(), ns)
		if client.IgnoreNotFound(err) != nil {
			t.Errorf("reconciletest: deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

var notInName = regexp.MustCompile(`[^a-z0-9]+`)

// namePrefixLength is how much of a test's name its namespace keeps.
const namePrefixLength = 40

// namePrefix turns a test name into a prefix for GenerateName: a DNS label of at most
// 41 characters, ending in a hyphen. With the random suffix the namespace's name is at most
// 46 characters long, which leaves an operator room to name a namespace or an object after
// it ("tenant-" followed by it) within the 63 characters of a label.
func namePrefix(testName string) string {
	name := strings.Trim(notInName.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	name = strings.TrimRight(name[:min(len(name), namePrefixLength)], "-")
	if name == "" {
		name = "test"
	}
	return name + "-"
}
