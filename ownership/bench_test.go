package ownership

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// The steady state: Ensure compares the desired object with the cached one on every
// reconcile and finds nothing to do, so this is the comparison that runs most.
func BenchmarkDriftUnchanged(b *testing.B) {
	want, live := deployment(), deployment(defaulted)
	b.ReportAllocs()
	for b.Loop() {
		if d := drift(want, live); len(d) != 0 {
			b.Fatal(d)
		}
	}
}

// A reverted drift: the diff names each changed field.
func BenchmarkDriftChanged(b *testing.B) {
	want := deployment()
	live := deployment(defaulted, func(d *appsv1.Deployment) {
		*d.Spec.Replicas = 5
		d.Spec.Template.Spec.Containers[0].Image = "nginx"
		d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 80
	})
	b.ReportAllocs()
	for b.Loop() {
		if d := drift(want, live); len(d) != 3 {
			b.Fatal(d)
		}
	}
}

// A changed list key: before an update, Ensure looks for the elements it must remove.
func BenchmarkStrays(b *testing.B) {
	want := deployment()
	live := deployment(defaulted, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 80
	})
	b.ReportAllocs()
	for b.Loop() {
		if s := strays(want, live); len(s) != 1 {
			b.Fatal(s)
		}
	}
}
