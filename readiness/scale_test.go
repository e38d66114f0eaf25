package readiness_test

import (
	"testing"

	"github.com/reconcilekit/reconcilekit/readiness"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeploymentScaleReportsPodsAndTheirSelector(t *testing.T) {
	tests := []struct {
		name string
		d    appsv1.Deployment
		want readiness.Scale
	}{{
		name: "counts from the status and a sorted selector from the spec",
		d: appsv1.Deployment{
			Spec:   appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"b": "2", "a": "1"}}},
			Status: appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2},
		},
		want: readiness.Scale{Replicas: 3, ReadyReplicas: 2, Selector: "a=1,b=2"},
	}, {
		name: "no selector reports none",
		d:    appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 1}},
		want: readiness.Scale{Replicas: 1},
	}, {
		name: "an invalid selector reports none",
		d: appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}},
		}}},
		want: readiness.Scale{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readiness.DeploymentScale(&tt.d); got != tt.want {
				t.Errorf("DeploymentScale = %+v, want %+v", got, tt.want)
			}
		})
	}
}
