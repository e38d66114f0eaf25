// Package capi holds the Memcached, PodSet, At and Keyval operators written the way Cluster API's
// controllers write theirs, with sigs.k8s.io/cluster-api: the MachineDeployment controller
// (core/reconcilers/machinedeployment) is the model. Reconcile fetches the object, makes
// a util/patch.Helper at the top and defers patching with it, the status observed
// generation set when the reconcile returned no error and the owned conditions listed;
// the deferred patch first summarizes Ready from the other conditions with
// util/conditions (SetSummaryCondition). The controller is built with util/controller's
// builder, as Cluster API's own are since v1.14: the priority queue, a reconcile at most
// once a second per object, and DeferNextReconcileUntilCacheUpToDate after a child is
// created, so that the next reconcile waits for the cache to see it
// (kubernetes-sigs/cluster-api#13720). Its event filter is the one infrastructure
// providers put on every controller, ResourceNotPausedAndHasFilterLabel, with no filter
// label. The Keyval's finalizer is the MachineDeployment controller's way too: ensured with
// util/finalizers.EnsureFinalizer before the patch helper is made, and removed with
// controllerutil by reconcileDelete once the example's cleanup is done (with
// spec.storage.whenDeleted Delete, the StatefulSet and then the volume claims).
//
// The conditions are the examples' (Available or Succeeded, Ready, and Reconciling while
// the children are not done), set with util/conditions, so that kstatus reads each object
// as the examples' are read: Cluster API's own kinds report progress in conditions
// kstatus does not know (RollingOut, ScalingUp), which would read Current too early.
package capi

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The condition types the operators own.
const (
	// Available, Progressing and Degraded report a Memcached's or a PodSet's Deployment's
	// rollout, as the examples do (their API's status): available, rolling out, failed.
	Available   = "Available"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	// Succeeded says an At's command succeeded.
	Succeeded = "Succeeded"
	// Ready summarizes the others.
	Ready = "Ready"
	// Reconciling says the operator is still at work on the object.
	Reconciling = "Reconciling"
	// Stalled says the operator cannot go on without a change to the object.
	Stalled = "Stalled"
)

// patchObject summarizes Ready from the condition of the kind (Available or Succeeded),
// Reconciling and Stalled, and patches obj with h, owning those conditions and a
// Deployment's rollout's (Progressing, Degraded; an At has none): what
// patchMachineDeployment does.
func patchObject(ctx context.Context, h *patch.Helper, obj object, own string, options ...patch.Option) error {
	if err := conditions.SetSummaryCondition(obj, obj, Ready,
		conditions.ForConditionTypes{own, Reconciling, Stalled},
		conditions.NegativePolarityConditionTypes{Reconciling, Stalled},
		conditions.IgnoreTypesIfMissing{Reconciling, Stalled},
	); err != nil {
		return err
	}
	options = append(options, patch.WithOwnedConditions{Conditions: []string{Ready, own, Reconciling, Stalled, Progressing, Degraded}})
	return h.Patch(ctx, obj, options...)
}

// mark sets a condition of obj's generation.
func mark(obj object, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(obj, metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: obj.GetGeneration()})
}

// progressing marks obj Reconciling, or not once done.
func progressing(obj object, done bool, reason, message string) {
	if done {
		conditions.Delete(obj, Reconciling)
		return
	}
	mark(obj, Reconciling, metav1.ConditionTrue, reason, message)
}

// object is a kind of the examples: an object with conditions.
type object interface {
	client.Object
	conditions.Setter
}
