package ownership

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

	// ResourceNames, when set, restrict Missing to these objects of Resource, as the
	// marker's resourceNames does: the role a binding refused for escalation grants.
	ResourceNames []string

	// Binding and Role are set for a RoleBinding or ClusterRoleBinding (or a Role or
	// ClusterRole) the API server refused as an escalation: it grants permissions the
	// operator does not hold itself. Binding names what was refused, Role the role it
	// grants (for a refused role, the role itself), each as "Kind namespace/name" or
	// "Kind name". Missing is then bind on the role (escalate for a role), which lets the
	// operator grant it without holding its rules.
	Binding, Role string

	// Err is the API server's refusal.
	Err error
}

// Error says what was refused and the marker that grants it. An escalation's refusal,
// whose message lists every rule of the role the operator lacks (dozens for "edit"), is
// told without the list: the marker is the fix.
func (e *ForbiddenError) Error() string {
	if e.Role != "" {
		const fix = "(an escalation). Let the operator %s without holding them: %s on %s, by this marker among the controller's RBAC markers, then regenerate the role:\n\t%s"
		if e.Binding != "" {
			return fmt.Sprintf("the API server refused %s, which grants %s: the operator does not hold every permission of that role itself "+fix,
				e.Binding, e.Role, "grant the role", strings.Join(e.Missing, ", "), e.Role, e.Marker())
		}
		return fmt.Sprintf("the API server refused %s: the operator does not hold every permission it lists "+fix,
			e.Role, "write the role", strings.Join(e.Missing, ", "), e.Role, e.Marker())
	}
	return fmt.Sprintf("%v; the role lacks %s on %s. Grant it all with this marker among the controller's RBAC markers, then regenerate the role:\n\t%s",
		e.Err, strings.Join(e.Missing, ", "), e.Resource, e.Marker())
}

// Unwrap returns the API server's refusal.
func (e *ForbiddenError) Unwrap() error { return e.Err }

// Marker is the kubebuilder RBAC marker that grants the missing verbs, such as
//
//	// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
//
// or, for a binding refused for escalation,
//
//	// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=edit
func (e *ForbiddenError) Marker() string {
	m := rbac.Marker(e.Group, e.Resource, e.Missing)
	if len(e.ResourceNames) > 0 {
		m += ",resourceNames=" + strings.Join(e.ResourceNames, ";")
	}
	return m
}

// escalationMessage is what the API server's RBAC escalation check says of a role or
// binding that grants permissions its writer does not hold.
const escalationMessage = "attempting to grant RBAC permissions not currently held"

// explainEscalation returns the *ForbiddenError of err, the API server's refusal of obj for
// escalation, when obj is a RoleBinding, ClusterRoleBinding, Role or ClusterRole; nil
// otherwise. The fix it names is bind (escalate for a role) on that one role, which
// Kubernetes' RBAC checks before it compares the rules.
func explainEscalation(err error, obj client.Object, scheme *runtime.Scheme) *ForbiddenError {
	if !strings.Contains(err.Error(), escalationMessage) {
		return nil
	}
	gvk, gerr := apiutil.GVKForObject(obj, scheme)
	if gerr != nil || gvk.Group != rbacv1.GroupName {
		return nil
	}
	name := func(kind, namespace, name string) string {
		if namespace == "" {
			return kind + " " + name
		}
		return kind + " " + namespace + "/" + name
	}
	resource := func(kind string) string {
		if kind == "ClusterRole" {
			return "clusterroles"
		}
		return "roles"
	}
	switch gvk.Kind {
	case "RoleBinding", "ClusterRoleBinding":
		ref, ok := roleRef(obj)
		if !ok {
			return nil
		}
		roleNamespace := ""
		if ref.Kind == "Role" {
			roleNamespace = obj.GetNamespace()
		}
		return &ForbiddenError{Group: rbacv1.GroupName, Resource: resource(ref.Kind), Missing: []string{"bind"}, ResourceNames: []string{ref.Name},
			Binding: name(gvk.Kind, obj.GetNamespace(), obj.GetName()), Role: name(ref.Kind, roleNamespace, ref.Name), Err: err}
	case "Role", "ClusterRole":
		return &ForbiddenError{Group: rbacv1.GroupName, Resource: resource(gvk.Kind), Missing: []string{"escalate"}, ResourceNames: []string{obj.GetName()},
			Role: name(gvk.Kind, obj.GetNamespace(), obj.GetName()), Err: err}
	}
	return nil
}

// roleRef returns the role a binding grants, typed or unstructured.
func roleRef(obj client.Object) (rbacv1.RoleRef, bool) {
	switch b := obj.(type) {
	case *rbacv1.RoleBinding:
		return b.RoleRef, true
	case *rbacv1.ClusterRoleBinding:
		return b.RoleRef, true
	case *unstructured.Unstructured:
		kind, _, _ := unstructured.NestedString(b.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(b.Object, "roleRef", "name")
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}, kind != "" && name != ""
	}
	return rbacv1.RoleRef{}, false
}

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
	if escalation := explainEscalation(err, obj, w.Client.Scheme()); escalation != nil {
		return escalation
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
