package ownership_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// The filter alone, on a fake client: which Deployments name a ConfigMap in an annotation.
func TestEnqueueReferrersEnqueuesExactlyTheReferrersInTheObjectsNamespace(t *testing.T) {
	referrer := func(ns, name, ref string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"config": ref}}}
	}
	c := fake.NewClientBuilder().WithObjects(
		referrer("a", "one", "settings"), referrer("a", "two", "settings"),
		referrer("a", "other", "elsewhere"), referrer("b", "three", "settings"),
	).Build()
	h := ownership.EnqueueReferrers(c, &appsv1.DeploymentList{}, func(d *appsv1.Deployment) []string {
		return []string{d.Annotations["config"]}
	})
	tests := []struct {
		name      string
		namespace string
		configMap string
		want      []string
	}{
		{"every referrer in the namespace", "a", "settings", []string{"a/one", "a/two"}},
		{"none in another namespace", "b", "elsewhere", nil},
		{"an unreferenced object", "a", "unused", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tt.namespace, Name: tt.configMap}}
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: cm, ObjectNew: cm}, q)
			var got []string
			for q.Len() > 0 {
				r, _ := q.Get()
				got = append(got, r.String())
				q.Done(r)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("enqueued %q, want %q", got, tt.want)
			}
		})
	}
}
