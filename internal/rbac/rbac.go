// Package rbac names the fix for a refused request: the kubebuilder RBAC marker that grants
// every verb a call needs and the caller's role lacks, found by asking the API server.
package rbac

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Verbs are the verbs of a resource in the order a marker lists them, kubebuilder's.
var Verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// Sorted returns verbs without repetition, in the order of Verbs (others last, as given).
func Sorted(verbs ...string) []string {
	var out []string
	for _, v := range Verbs {
		if slices.Contains(verbs, v) {
			out = append(out, v)
		}
	}
	for _, v := range verbs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Marker is the kubebuilder marker that grants verbs on the resource of an API group ("" for
// the core group), such as
//
//	// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
func Marker(group, resource string, verbs []string) string {
	if group == "" {
		group = `""`
	}
	return fmt.Sprintf("// +kubebuilder:rbac:groups=%s,resources=%s,verbs=%s", group, resource, strings.Join(Sorted(verbs...), ";"))
}

// Missing returns those of verbs that c's user may not use on the resource attrs names (its
// verb ignored), asking the API server: one SelfSubjectAccessReview a verb, which every
// authenticated user may create. It is for the moment a request has been refused, not for
// every request.
func Missing(ctx context.Context, c client.Client, attrs authorizationv1.ResourceAttributes, verbs []string) ([]string, error) {
	var missing []string
	for _, verb := range Sorted(verbs...) {
		asked := attrs
		asked.Verb = verb
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &asked}}
		if err := c.Create(ctx, review); err != nil {
			return nil, fmt.Errorf("asking whether %s is allowed: %w", verb, err)
		}
		if !review.Status.Allowed {
			missing = append(missing, verb)
		}
	}
	return missing, nil
}
