package ownership

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/internal/rbac"
)

// The verbs each call needs on the kind it writes: those of the manager's cache (get, list,
// watch) and of its writes. Ensure creates and applies (a patch); Delete and EnsureSet delete.
var (
	ensureVerbs     = []string{"get", "list", "watch", "create", "patch"}
	createOnlyVerbs = []string{"get", "list", "watch", "create"}
	deleteVerbs     = []string{"get", "list", "watch", "delete"}
	ensureSetVerbs  = []string{"get", "list", "watch", "create", "patch", "delete"}
)

// ForbiddenError is the API server's refusal of a request that Ensure, EnsureSet or Delete
// sent, with the whole fix: Marker is one kubebuilder RBAC marker that grants every verb the
// call needs on the kind and the operator's role lacks, so that a single change of the role
// ends the refusals, where the API server names only the verb of the request it refused.
// What the role lacks is asked of the API server once, when the refusal arrives (one
// SelfSubjectAccessReview a verb, which every user may create). apierrors.IsForbidden holds
// for it.
type ForbiddenError struct {
	// Group and Resource name what was refused, as a marker names them: "apps" and
	// "statefulsets"; "" is the core group. For a refusal to set blockOwnerDeletion, which
	// needs update on the owner's finalizers, Resource is the owner's, such as
	// "memcacheds/finalizers".
	Group, Resource string

	// Missing are the verbs the call needs that the role lacks, in a marker's order. When
	// the API server could not be asked, they are every verb the call needs.
	Missing []string

	// Err is the API server's refusal.
	Err error
}

// Error says what was refused and the marker that grants it.
func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("%v; the role lacks %s on %s. Grant it all with this marker among the controller's RBAC markers, then regenerate the role:\n\t%s",
		e.Err, strings.Join(e.Missing, ", "), e.Resource, e.Marker())
}

// Unwrap returns the API server's refusal.
func (e *ForbiddenError) Unwrap() error { return e.Err }

// Marker is the kubebuilder RBAC marker that grants the missing verbs, such as
//
//	// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
func (e *ForbiddenError) Marker() string { return rbac.Marker(e.Group, e.Resource, e.Missing) }

// explainForbidden turns the API server's refusal of a request of a call, which needs verbs
// on obj's kind, into a *ForbiddenError naming what the role lacks; any other error is
// returned as it is. When the role grants the call every verb on the kind, the refusal is
// of blockOwnerDeletion (the OwnerReferencesPermissionEnforcement admission plugin), which
// needs update on owner's finalizers.
func (w Writer) explainForbidden(ctx context.Context, err error, owner, obj client.Object, verbs []string) error {
	var explained *ForbiddenError
	if err == nil || obj == nil || !apierrors.IsForbidden(err) || errors.As(err, &explained) {
		return err
	}
	missing := func(obj client.Object, subresource string, verbs []string) (group, resource string, lacks []string) {
		gvk, gerr := apiutil.GVKForObject(obj, w.Client.Scheme())
		if gerr != nil {
			return "", "", nil
		}
		mapping, merr := w.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if merr != nil {
			return "", "", nil
		}
		group, resource = gvk.Group, mapping.Resource.Resource
		attrs := authorizationv1.ResourceAttributes{Namespace: obj.GetNamespace(), Group: group, Resource: resource, Subresource: subresource}
		lacks, aerr := rbac.Missing(ctx, w.Client, attrs, verbs)
		if aerr != nil {
			lacks = rbac.Sorted(verbs...) // cannot ask: name them all, which fixes it all the same
		}
		if subresource != "" {
			resource += "/" + subresource
		}
		return group, resource, lacks
	}
	if group, resource, lacks := missing(obj, "", verbs); len(lacks) > 0 {
		return &ForbiddenError{Group: group, Resource: resource, Missing: lacks, Err: err}
	}
	if owner != nil {
		if group, resource, lacks := missing(owner, "finalizers", []string{"update"}); len(lacks) > 0 {
			return &ForbiddenError{Group: group, Resource: resource, Missing: lacks, Err: err}
		}
	}
	return err
}
