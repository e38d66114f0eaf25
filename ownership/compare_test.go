package ownership

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/reconcilekit/reconcilekit/workload"
)

func deployment(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := workload.Deployment("ns", "web", 2, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:    "web",
			Image:   "busybox",
			Command: []string{"sleep", "3600"},
			Ports:   []corev1.ContainerPort{{ContainerPort: 1234}},
			Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)},
		}}},
	})
	for _, m := range mutate {
		m(d)
	}
	return d
}

func TestDrift(t *testing.T) {
	tests := []struct {
		name string
		live *appsv1.Deployment
		want []string // substrings of the diff lines, in order; none means no drift
	}{
		{name: "identical objects do not drift", live: deployment()},
		{name: "server defaults and status are not drift", live: deployment(defaulted)},
		{name: "a quantity written differently is the same quantity", live: deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("65536Ki")
		})},
		{name: "labels others add are not drift", live: deployment(func(d *appsv1.Deployment) {
			d.Labels = map[string]string{"app": "web", "team": "x"}
		})},
		{name: "a container others inject is not drift", live: deployment(func(d *appsv1.Deployment) {
			c := d.Spec.Template.Spec.Containers
			d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar"}, c[0]}
		})},
		{name: "a changed replica count is drift", live: deployment(defaulted, func(d *appsv1.Deployment) {
			d.Spec.Replicas = ptr.To[int32](5)
		}), want: []string{"spec.replicas: 5 → 2"}},
		{name: "a changed image is drift, with its path", live: deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "nginx"
		}), want: []string{`spec.template.spec.containers[0].image: "nginx" → "busybox"`}},
		{name: "a pointer to false is compared", live: deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		}), want: []string{"allowPrivilegeEscalation: true → false"}},
		{name: "a removed pointer is drift", live: deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].SecurityContext = nil
		}), want: []string{"securityContext: <unset> →"}},
		{name: "a longer command is drift", live: deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Command = []string{"sleep", "3600", "x"}
		}), want: []string{"command:"}},
		{name: "a missing label is drift", live: deployment(func(d *appsv1.Deployment) {
			d.Labels = nil
		}), want: []string{"metadata.labels[app]: <unset>"}},
		{name: "a missing container is drift", live: deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers = nil
		}), want: []string{"containers[0]: <unset>"}},
		{name: "a changed port is drift", live: deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 80
		}), want: []string{"ports[0].containerPort: 80 → 1234"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := drift(deployment(), tt.live)
			if len(got) != len(tt.want) {
				t.Fatalf("drift = %q, want %d lines like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("drift line %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestDriftListsAtMostEightDifferences(t *testing.T) {
	want := &corev1.ConfigMap{Data: map[string]string{}}
	for _, k := range strings.Split("abcdefghijkl", "") {
		want.Data[k] = k
	}
	if got := drift(want, &corev1.ConfigMap{}); len(got) != maxDiffs {
		t.Errorf("drift listed %d differences, want %d", len(got), maxDiffs)
	}
}

func TestStrays(t *testing.T) {
	tests := []struct {
		name string
		live *appsv1.Deployment
		want []string // JSON pointers, in the order they are removed
	}{
		{name: "matching keys leave no strays", live: deployment(defaulted)},
		{name: "elements others add are not strays while every key matches", live: deployment(defaulted, func(d *appsv1.Deployment) {
			c := d.Spec.Template.Spec.Containers
			d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar"}, c[0]}
			d.Spec.Template.Spec.Containers[1].Ports = append(d.Spec.Template.Spec.Containers[1].Ports, corev1.ContainerPort{ContainerPort: 9090})
		})},
		{name: "a changed port number leaves its element a stray", live: deployment(defaulted, func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 80
		}), want: []string{"/spec/template/spec/containers/0/ports/0"}},
		{name: "a stray is found at its live position", live: deployment(defaulted, func(d *appsv1.Deployment) {
			c := d.Spec.Template.Spec.Containers
			d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar"}, c[0]}
			d.Spec.Template.Spec.Containers[1].Ports = []corev1.ContainerPort{{ContainerPort: 9090}, {ContainerPort: 80}}
		}), want: []string{"/spec/template/spec/containers/1/ports/1", "/spec/template/spec/containers/1/ports/0"}},
		{name: "a renamed container is a stray", live: deployment(defaulted, func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Name = "www"
		}), want: []string{"/spec/template/spec/containers/0"}},
		{name: "a list without a merge key has no strays", live: deployment(defaulted, func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Command = []string{"sleep", "1"}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range strays(deployment(), tt.live) {
				got = append(got, s.path)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("strays = %q, want %q", got, tt.want)
			}
		})
	}
}

// defaulted is what the API server makes of a desired Deployment.
func defaulted(d *appsv1.Deployment) {
	d.UID, d.ResourceVersion, d.Generation = "uid", "7", 3
	d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	pod := &d.Spec.Template.Spec
	pod.RestartPolicy = corev1.RestartPolicyAlways
	pod.DNSPolicy = corev1.DNSClusterFirst
	pod.TerminationGracePeriodSeconds = ptr.To[int64](30)
	c := &pod.Containers[0]
	c.ImagePullPolicy = corev1.PullAlways
	c.TerminationMessagePath = "/dev/termination-log"
	c.Ports[0].Protocol = corev1.ProtocolTCP
	d.Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 1}
}
