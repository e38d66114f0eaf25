package ownership

import (
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ImmutableError says that the live object differs from the desired one in fields the API
// server refuses to change once the object exists: a StatefulSet's volume claim templates.
// Ensure left them as they are, applied everything else, and returned the live object with
// this error. Nothing a retry does can change them, so report it (a condition) rather than
// retry: the next change of the owner or of the object reconciles again, and while the
// desired object stays the same Ensure sends nothing.
//
// When the rest needs the new templates (the pod template mounts a claim only they have),
// the API server refuses it too: Ensure then returns this error joined with the refusal
// (errors.Join), and each call sends that apply again.
type ImmutableError struct {
	// Kind, Namespace and Name name the object.
	Kind, Namespace, Name string
	// Field is the path of the fields left as they are, "spec.volumeClaimTemplates".
	Field string
	// Diff lists the differences, "path: live → desired" as in a Result's.
	Diff []string
	// Fix says what a person can do instead.
	Fix string
}

// Error names the object, the field, the differences and the fix; it holds no count or
// time, so that a status written from it changes only when the difference does.
func (e *ImmutableError) Error() string {
	return fmt.Sprintf("%s %s/%s: %s left as it is, the API server refuses to change it once the object exists: %s; %s",
		e.Kind, e.Namespace, e.Name, e.Field, strings.Join(e.Diff, "; "), e.Fix)
}

// IsImmutable reports whether err says that Ensure left fields the API server cannot change
// as they are (see ImmutableError).
func IsImmutable(err error) bool {
	var e *ImmutableError
	return errors.As(err, &e)
}

// claimTemplatesFix is what to do when a StatefulSet's claim templates must change.
const claimTemplatesFix = "the existing claims keep theirs: expand each PersistentVolumeClaim " +
	"(its StorageClass must allow it), or delete the StatefulSet with --cascade=orphan, " +
	"which keeps its pods and claims, for it to be created again with the new templates"

// keepImmutable gives want the live values of the fields of a StatefulSet the API server
// refuses to change, its volume claim templates, so that Ensure neither compares nor sends
// them, and reports, with an *ImmutableError, whether desired wanted others. Applying
// different ones would be refused as a whole, the rest of the change (a new image)
// included, again on every reconcile.
func keepImmutable(want, live client.Object) error {
	w, ok := want.(*appsv1.StatefulSet)
	l, _ := live.(*appsv1.StatefulSet)
	if !ok || l == nil {
		return nil
	}
	diff := claimTemplatesDrift(w.Spec.VolumeClaimTemplates, l.Spec.VolumeClaimTemplates)
	w.Spec.VolumeClaimTemplates = l.Spec.VolumeClaimTemplates
	if len(diff) == 0 {
		return nil
	}
	return &ImmutableError{Kind: "StatefulSet", Namespace: l.Namespace, Name: l.Name,
		Field: "spec.volumeClaimTemplates", Diff: diff, Fix: claimTemplatesFix}
}

// claimTemplatesDrift lists where the live claim templates differ from the desired ones: by
// the fields desired sets, as Ensure compares (the defaults the API server adds are no
// difference), claim by claim; another number of claims is one difference.
func claimTemplatesDrift(want, live []corev1.PersistentVolumeClaim) []string {
	if len(want) != len(live) {
		return []string{fmt.Sprintf("spec.volumeClaimTemplates: %s → %s", claimNames(live), claimNames(want))}
	}
	return drift(&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: want}},
		&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: live}})
}

// claimNames lists the claims' names, as [data logs].
func claimNames(claims []corev1.PersistentVolumeClaim) string {
	names := make([]string, len(claims))
	for i, c := range claims {
		names[i] = c.Name
	}
	return fmt.Sprint(names)
}
