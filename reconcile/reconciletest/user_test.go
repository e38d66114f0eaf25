package reconciletest

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestProbeAsksForTheFirstThingARoleAllows(t *testing.T) {
	tests := []struct {
		name  string
		rules []rbacv1.PolicyRule
		want  *authorizationv1.SubjectAccessReviewSpec
	}{
		{"a resource", []rbacv1.PolicyRule{
			{Verbs: []string{"get", "list"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
		}, &authorizationv1.SubjectAccessReviewSpec{User: "u", ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "get", Group: "apps", Resource: "deployments",
		}}},
		{"a named subresource", []rbacv1.PolicyRule{
			{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"pods/status"}, ResourceNames: []string{"p"}},
		}, &authorizationv1.SubjectAccessReviewSpec{User: "u", ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "update", Resource: "pods", Subresource: "status", Name: "p",
		}}},
		{"a path, after a rule without verbs", []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}},
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}},
		}, &authorizationv1.SubjectAccessReviewSpec{User: "u", NonResourceAttributes: &authorizationv1.NonResourceAttributes{
			Verb: "get", Path: "/metrics",
		}}},
		{"nothing", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := probe("u", &rbacv1.ClusterRole{Rules: tt.rules})
			if ok != (tt.want != nil) || ok && !equality.Semantic.DeepEqual(got, *tt.want) {
				t.Errorf("got %+v, %v; want %+v", got, ok, tt.want)
			}
		})
	}
}
