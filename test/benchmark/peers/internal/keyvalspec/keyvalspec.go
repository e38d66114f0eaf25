// Package keyvalspec checks a Keyval's spec as the example's operator does before it acts
// on it: what the schema refuses but can still reach an operator (written past the schema,
// or stored under an older one), so that the peer operators report the same specs Stalled.
package keyvalspec

import (
	"fmt"

	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
)

// Invalid says what of kv's spec the schema refuses, as far as an operator relies on it:
// the number of servers, and what happens to their volumes on deletion. nil is a spec the
// operator can act on.
func Invalid(kv *storev1alpha1.Keyval) error {
	if r := kv.Spec.Replicas; r < keyval.MinReplicas || r > keyval.MaxReplicas {
		return fmt.Errorf("spec.replicas %d is not between %d and %d", r, keyval.MinReplicas, keyval.MaxReplicas)
	}
	switch w := kv.Spec.Storage.WhenDeleted; w {
	case "", storev1alpha1.Retain, storev1alpha1.Delete: // "" is Retain, the default
	default:
		return fmt.Errorf("spec.storage.whenDeleted %q is neither %s nor %s", w, storev1alpha1.Retain, storev1alpha1.Delete)
	}
	return nil
}
