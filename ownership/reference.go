package ownership

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// NotControlledError reports an object that exists but is not controlled by the owner that
// wants it: another controller owns it, or nothing does. Ensure never takes such an object over.
type NotControlledError struct {
	// Kind, Namespace and Name identify the object.
	Kind, Namespace, Name string
	// Controller is the object's controller reference, nil when it has none.
	Controller *metav1.OwnerReference
}

// Error says who controls the object, if anyone.
func (e *NotControlledError) Error() string {
	if e.Controller == nil {
		return fmt.Sprintf("%s %s/%s exists and has no controller; it is left alone", e.Kind, e.Namespace, e.Name)
	}
	return fmt.Sprintf("%s %s/%s exists and is controlled by %s %q; it is left alone",
		e.Kind, e.Namespace, e.Name, e.Controller.Kind, e.Controller.Name)
}

// IsNotControlled reports whether err, or any error it wraps, is a *NotControlledError.
func IsNotControlled(err error) bool {
	var e *NotControlledError
	return errors.As(err, &e)
}

// ClusterScopeMarker is the kubebuilder marker that makes a custom resource cluster-scoped:
// written above its Go type, it makes controller-gen declare the CRD's scope Cluster. A
// namespaced owner cannot own a cluster-scoped object (a Namespace, a ClusterRole); a
// cluster-scoped one can own objects of either scope.
const ClusterScopeMarker = "+kubebuilder:resource:scope=Cluster"

// InvalidOwnerError reports an owner reference the API server's garbage collector would act
// on wrongly: an owner in another namespace, or a namespaced owner of a cluster-scoped object.
// Such an object would be deleted soon after it is created, so it is refused up front. No
// retry can mend it, only a change of the code or of the owner's CRD, which Fix names.
type InvalidOwnerError struct {
	// Owner and Object name the two ends of the reference: as namespace/name for objects,
	// as kinds for a declaration (reconcile.Manager refuses those before it starts).
	Owner, Object string
	// Reason says what is wrong.
	Reason string
	// Fix says what to change, empty when Reason says it already.
	Fix string
}

// Error names both ends of the reference, what is wrong with it, and the fix.
func (e *InvalidOwnerError) Error() string {
	msg := fmt.Sprintf("%s cannot own %s: %s", e.Owner, e.Object, e.Reason)
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

// ClusterScopeFix is the Fix of an InvalidOwnerError for a namespaced owner of a
// cluster-scoped object: the owner's type is to be marked ClusterScopeMarker.
func ClusterScopeFix(ownerKind string) string {
	if ownerKind == "" {
		ownerKind = "the owner's type"
	}
	return fmt.Sprintf("make %s cluster-scoped with the marker %s above its Go type and regenerate its CRD (make manifests), or do not own the object: track it by a label and delete it in a finalizer's cleanup",
		ownerKind, ClusterScopeMarker)
}

// IsInvalidOwner reports whether err, or any error it wraps, is an *InvalidOwnerError.
func IsInvalidOwner(err error) bool {
	var e *InvalidOwnerError
	return errors.As(err, &e)
}

// IsControlledBy reports whether owner is obj's controller. It compares UIDs, so an owner that
// was deleted and recreated under the same name does not count.
func IsControlledBy(obj, owner metav1.Object) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && owner.GetUID() != "" && ref.UID == owner.GetUID()
}

// SetController makes owner the controller of obj, with blockOwnerDeletion so that foreground
// deletion waits for obj. It returns an *InvalidOwnerError for a reference the garbage
// collector would break, and a *NotControlledError when obj already has another controller.
// Setting the same controller again changes nothing.
func SetController(owner, obj client.Object, scheme *runtime.Scheme) error {
	if err := validOwner(owner, obj); err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(owner, scheme)
	if err != nil {
		return fmt.Errorf("owner %s: %w", owner.GetName(), err)
	}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil && ref.UID != owner.GetUID() {
		kind, _ := kindOf(obj, scheme)
		return &NotControlledError{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Controller: ref.DeepCopy()}
	}
	ref := metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if refs[i].UID == ref.UID {
			refs[i] = ref
			obj.SetOwnerReferences(refs)
			return nil
		}
	}
	obj.SetOwnerReferences(append(refs, ref))
	return nil
}

// validOwner refuses the references the garbage collector deletes the dependent for. An
// object with no namespace is taken to be cluster-scoped: a namespaced owner can only own
// objects in its own namespace.
func validOwner(owner, obj client.Object) error {
	refuse := func(reason, fix string) error {
		return &InvalidOwnerError{
			Owner:  owner.GetNamespace() + "/" + owner.GetName(),
			Object: obj.GetNamespace() + "/" + obj.GetName(),
			Reason: reason,
			Fix:    fix,
		}
	}
	switch {
	case owner.GetUID() == "":
		return refuse("the owner has no UID", "read it from the API server first")
	case owner.GetNamespace() == "":
		return nil // a cluster-scoped owner may own anything
	case obj.GetNamespace() == "":
		return refuse("a namespaced owner cannot own a cluster-scoped object", ClusterScopeFix(""))
	case obj.GetNamespace() != owner.GetNamespace():
		return refuse("owner references cannot cross namespaces",
			"create the object in the owner's namespace, or do not own it: track it by a label and delete it in a finalizer's cleanup")
	}
	return nil
}

func kindOf(obj client.Object, scheme *runtime.Scheme) (string, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return "", err
	}
	return gvk.Kind, nil
}

func controllerOf(obj client.Object) *metav1.OwnerReference {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return ref.DeepCopy()
	}
	return nil
}
