package reconcile

import (
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// ReasonInvalidOwner is Stalled's reason when the logic asked for an owner reference the
// garbage collector would break (ownership.InvalidOwnerError): a namespaced owner of a
// cluster-scoped child, or an owner in another namespace. No retry mends it, so the
// reconcile is terminal and the message names the fix, such as the marker
// ownership.ClusterScopeMarker.
const ReasonInvalidOwner = "InvalidOwner"

// checkScopes refuses a declaration whose namespaced kind owns a cluster-scoped kind
// (WithChildren): every child it would create would be refused with an
// ownership.InvalidOwnerError, so the operator would start only to stall on every object.
// The scopes are the API server's (mapper); a kind it does not know yet, such as an optional
// kind whose CRD is absent, is left to the reconcile, which refuses the same way.
func checkScopes(mapper meta.RESTMapper, scheme *runtime.Scheme, owner client.Object, children, optional []client.Object) error {
	if mapper == nil || len(children) == 0 {
		return nil
	}
	namespaced, err := apiutil.IsObjectNamespaced(owner, scheme, mapper)
	if err != nil || !namespaced {
		return nil
	}
	ownerKind := kindName(owner, scheme)
	var errs []error
	for _, child := range children {
		if slices.ContainsFunc(optional, sameKind(child)) {
			continue
		}
		childNamespaced, err := apiutil.IsObjectNamespaced(child, scheme, mapper)
		if err != nil || childNamespaced {
			continue
		}
		errs = append(errs, &ownership.InvalidOwnerError{
			Owner:  ownerKind + " (namespaced)",
			Object: kindName(child, scheme) + " (cluster-scoped, WithChildren)",
			Reason: "a namespaced owner cannot own a cluster-scoped object",
			Fix:    ownership.ClusterScopeFix(ownerKind),
		})
	}
	return errors.Join(errs...)
}

// invalidOwner returns the ownership.InvalidOwnerError err holds, or nil.
func invalidOwner(err error) *ownership.InvalidOwnerError {
	var e *ownership.InvalidOwnerError
	if errors.As(err, &e) {
		return e
	}
	return nil
}
