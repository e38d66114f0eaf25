package reconciletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConfigFor returns a config that authenticates as user, bound to the named ClusterRole
// and to nothing else. A manager run with it proves that the role, typically the one
// controller-gen generates from the operator's RBAC markers, grants all the operator
// needs. The role must exist; the binding is deleted when the test ends.
func (cp *ControlPlane) ConfigFor(t testing.TB, user, clusterRole string) *rest.Config {
	t.Helper()
	ctx := t.Context()
	var role rbacv1.ClusterRole
	if err := cp.client.Get(ctx, client.ObjectKey{Name: clusterRole}, &role); err != nil {
		t.Fatalf("reconciletest: binding %s to ClusterRole %s: %v", user, clusterRole, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "reconciletest-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := cp.client.Create(ctx, binding); err != nil {
		t.Fatalf("reconciletest: binding %s to ClusterRole %s: %v", user, clusterRole, err)
	}
	t.Cleanup(func() {
		if err := cp.client.Delete(context.Background(), binding); client.IgnoreNotFound(err) != nil {
			t.Errorf("reconciletest: deleting ClusterRoleBinding %s: %v", binding.Name, err)
		}
	})

	// The authorizer learns of the binding through a watch. Wait until it allows the
	// role's first rule, so that the first request made with the config is judged by
	// the binding.
	if spec, ok := probe(user, &role); ok {
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			review := &authorizationv1.SubjectAccessReview{Spec: spec}
			if err := cp.client.Create(ctx, review); err != nil {
				return false, err
			}
			return review.Status.Allowed, nil
		})
		if err != nil {
			t.Fatalf("reconciletest: binding %s to ClusterRole %s: waiting for the binding to take effect: %v", user, clusterRole, err)
		}
	}

	cfg, err := cp.User(user)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// CreateClusterRole creates the ClusterRole that the YAML file at path holds, such as
// the config/rbac/role.yaml that controller-gen writes from an operator's RBAC markers,
// and returns its name for ConfigFor. Other documents in the file are ignored.
func (cp *ControlPlane) CreateClusterRole(ctx context.Context, path string) (string, error) {
	return cp.createClusterRole(ctx, path, func(*rbacv1.ClusterRole) {})
}

// createClusterRole is CreateClusterRole with a change to the role before it is created.
func (cp *ControlPlane) createClusterRole(ctx context.Context, path string, change func(*rbacv1.ClusterRole)) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reconciletest: %w", err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var role rbacv1.ClusterRole
		switch err := decoder.Decode(&role); {
		case errors.Is(err, io.EOF):
			return "", fmt.Errorf("reconciletest: %s holds no ClusterRole", path)
		case err != nil:
			return "", fmt.Errorf("reconciletest: reading %s: %w", path, err)
		case role.Kind != "ClusterRole":
			continue
		}
		change(&role)
		if err := cp.client.Create(ctx, &role); err != nil {
			return "", fmt.Errorf("reconciletest: creating the ClusterRole of %s: %w", path, err)
		}
		return role.Name, nil
	}
}

// probe returns a request that role allows, to ask the authorizer whether user may
// make it, and false if the role allows nothing.
func probe(user string, role *rbacv1.ClusterRole) (authorizationv1.SubjectAccessReviewSpec, bool) {
	spec := authorizationv1.SubjectAccessReviewSpec{User: user}
	for _, rule := range role.Rules {
		switch {
		case len(rule.Verbs) == 0:
		case len(rule.APIGroups) > 0 && len(rule.Resources) > 0:
			resource, subresource, _ := strings.Cut(rule.Resources[0], "/")
			spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
				Verb:        rule.Verbs[0],
				Group:       rule.APIGroups[0],
				Resource:    resource,
				Subresource: subresource,
			}
			if len(rule.ResourceNames) > 0 {
				spec.ResourceAttributes.Name = rule.ResourceNames[0]
			}
			return spec, true
		case len(rule.NonResourceURLs) > 0:
			spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{
				Verb: rule.Verbs[0],
				Path: rule.NonResourceURLs[0],
			}
			return spec, true
		}
	}
	return spec, false
}
