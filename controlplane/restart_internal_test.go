package controlplane

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUnseenByNodeIsAPendingBoundPodWithNoContainerReported(t *testing.T) {
	now := metav1.Now()
	waiting := []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	tests := []struct {
		name string
		pod  corev1.Pod
		want bool
	}{
		{"bound and pending, nothing reported", corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}, true},
		{"not yet scheduled", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, false},
		{"running", corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}, false},
		{"pending with a container reported waiting", corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting}}, false},
		{"pending with an init container reported", corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: waiting}}, false},
		{"being deleted", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unseenByNode(&tt.pod); got != tt.want {
				t.Errorf("unseenByNode = %v, want %v", got, tt.want)
			}
		})
	}
}
