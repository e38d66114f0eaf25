package rehearsal

import (
	"slices"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The local cluster logs through controller-runtime's logger, which has nothing to say here.
func init() { ctrl.SetLogger(logr.Discard()) }

// A client of the recorder, as a build's would be, sends every kind of write; the
// recorder words each as the report does.
func TestTheRecorderDescribesEachWriteByTheFieldsItChanged(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	ns := cp.Namespace(t)
	rec, err := startRecorder(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.close() })
	for _, contentType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(contentType, func(t *testing.T) {
			c, err := client.New(&rest.Config{Host: rec.url, ContentConfig: rest.ContentConfig{ContentType: contentType}}, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			labels := map[string]string{"app": "web"}
			dep := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx", Args: []string{"-a"}}}},
					},
				},
			}
			if err := c.Create(ctx, dep); err != nil {
				t.Fatal(err)
			}
			dep.Spec.Template.Annotations = map[string]string{"example.com/restartedAt": "now"}
			dep.Spec.Template.Spec.Containers[0].Args = []string{"-b"}
			if err := c.Update(ctx, dep); err != nil {
				t.Fatal(err)
			}
			dep.Spec.Replicas = new(int32(3))
			if err := c.Update(ctx, dep); err != nil {
				t.Fatal(err)
			}
			if err := c.Update(ctx, dep); err != nil { // nothing changes
				t.Fatal(err)
			}
			dep.Status.ObservedGeneration = 7
			if err := c.Status().Update(ctx, dep); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, dep); err != nil {
				t.Fatal(err)
			}
			ws, err := rec.take()
			if err != nil {
				t.Fatal(err)
			}
			want := []Write{
				{Verb: Creates, Kind: "Deployment", Namespace: ns, Name: "web"},
				{Verb: Restarts, Kind: "Deployment", Namespace: ns, Name: "web", Changes: []Change{
					"pod template annotation example.com/restartedAt added",
					"spec.template.spec.containers[web].args changed",
				}},
				{Verb: Rewrites, Kind: "Deployment", Namespace: ns, Name: "web", Changes: []Change{"spec.replicas changed"}},
				{Verb: Rewrites, Kind: "Deployment", Namespace: ns, Name: "web"},
				{Verb: UpdatesStatus, Kind: "Deployment", Namespace: ns, Name: "web", Changes: []Change{"status.observedGeneration added"}},
				{Verb: Deletes, Kind: "Deployment", Namespace: ns, Name: "web"},
			}
			if !slices.EqualFunc(ws, want, func(a, b Write) bool {
				return a.Verb == b.Verb && a.Kind == b.Kind && a.Object() == b.Object() && slices.Equal(a.Changes, b.Changes)
			}) {
				t.Errorf("recorded\n%v\nwant\n%v", ws, want)
			}
		})
	}
}
