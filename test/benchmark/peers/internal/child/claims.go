package child

import (
	"context"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteWithClaims is the cleanup of a deleted owner whose volumes go with it: it deletes
// the StatefulSet desired names when owner controls it, then the volume claims that
// StatefulSet's claim templates made for its pods (<template>-<name>-<ordinal>, labelled
// as its pods), and returns how many of those claims are left, the ones being deleted
// included: the owner may go once none is. The StatefulSet goes first, as it would make a
// claim again for a pod it recreates; one another controller owns is left alone, and its
// claims with it (none left). Claims are read fresh through r, the API reader, not the
// cache: the operator does not watch them, and a deleted one must not be taken for there.
func DeleteWithClaims(ctx context.Context, c client.Client, r client.Reader, owner client.Object, desired *appsv1.StatefulSet) (left int, err error) {
	sts := &appsv1.StatefulSet{}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(desired), sts); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return 0, err
	case !metav1.IsControlledBy(sts, owner):
		return 0, nil
	case sts.DeletionTimestamp.IsZero():
		if err := c.Delete(ctx, sts, client.Preconditions{UID: &sts.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return 0, err
		}
	}
	var claims corev1.PersistentVolumeClaimList
	if err := r.List(ctx, &claims, client.InNamespace(desired.Namespace), client.MatchingLabels(desired.Spec.Template.Labels)); err != nil {
		return 0, err
	}
	for i := range claims.Items {
		claim := &claims.Items[i]
		if !isClaimOf(desired, claim.Name) {
			continue
		}
		left++
		if !claim.DeletionTimestamp.IsZero() {
			continue // gone once no pod uses it
		}
		if err := c.Delete(ctx, claim, client.Preconditions{UID: &claim.UID}); client.IgnoreNotFound(err) != nil {
			return left, err
		}
	}
	return left, nil
}

// isClaimOf says the claim of this name is one a claim template of sts made for a pod of
// it: <template>-<sts>-<ordinal>.
func isClaimOf(sts *appsv1.StatefulSet, name string) bool {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		ordinal, ok := strings.CutPrefix(name, t.Name+"-"+sts.Name+"-")
		if _, err := strconv.ParseUint(ordinal, 10, 32); ok && err == nil {
			return true
		}
	}
	return false
}

// ClaimsRecheck is how often a deleted owner's cleanup looks again whether its claims are
// gone, as the example's does: the operators do not watch claims.
const ClaimsRecheck = 2 * time.Second
