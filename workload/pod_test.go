package workload

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRestrictedSatisfiesThePodSecurityRestrictedLevel(t *testing.T) {
	pod := Restricted(corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "a"}, {Name: "b"}},
	}, 1001)
	if sc := pod.SecurityContext; !*sc.RunAsNonRoot || *sc.RunAsUser != 1001 || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context = %+v", sc)
	}
	for _, c := range append(pod.InitContainers, pod.Containers...) {
		if sc := c.SecurityContext; *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("container %s security context = %+v", c.Name, sc)
		}
	}
}
