package workload

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Restricted returns pod with the security settings Pod Security's restricted level asks
// for: not root (as user uid), no privilege escalation, no capabilities, the runtime's
// default seccomp profile. Operators that create pods in namespaces which enforce that level
// need every one of them, or the pods are refused.
func Restricted(pod corev1.PodSpec, uid int64) corev1.PodSpec {
	pod.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(uid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	restrict := func(containers []corev1.Container) []corev1.Container {
		out := make([]corev1.Container, len(containers))
		for i, c := range containers {
			c.SecurityContext = &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}
			out[i] = c
		}
		return out
	}
	pod.InitContainers = restrict(pod.InitContainers)
	pod.Containers = restrict(pod.Containers)
	return pod
}
