package reconcile

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// An Adopted keeps the shell of the client its calls pass, and one shell at most: a call
// with another client makes a new one in its place.
func TestAnAdoptedKeepsTheShellOfTheLastClientAlone(t *testing.T) {
	a := Adopt(For(&corev1.ConfigMap{}, LogicFunc[*corev1.ConfigMap](nil), TestFieldOwner))
	first, second := fake.NewClientBuilder().Build(), fake.NewClientBuilder().Build()
	s := a.shellOf(first)
	if a.shellOf(first) != s {
		t.Error("a second call with the same client made a new shell; want the first kept")
	}
	if a.shellOf(second) == s {
		t.Error("a call with another client reused the first client's shell")
	}
	if a.shellOf(first) == s {
		t.Error("the first client's shell was kept beside the second's; want one shell at most")
	}
}
