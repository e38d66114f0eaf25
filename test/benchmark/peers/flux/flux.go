// Package flux holds the Memcached, PodSet, At and Keyval operators written the way Flux's own
// controllers write theirs, with github.com/fluxcd/pkg/runtime: image-automation-controller's
// ImageUpdateAutomationReconciler is the model (Reconcile fetches the object, makes a
// patch.SerialPatcher, defers the final patch with runtime/reconcile.AddPatchOptions and
// owned conditions; reconcile marks progress with ProgressiveStatus, persists Reconciling
// when the generation is new, and defers the kstatus-aware ResultFinalizer), with
// source-controller's summarized Ready condition (conditions.SetSummary through the
// finalizer's Conditions: Stalled, Reconciling and the kind's own condition) and the
// predicates every Flux controller puts on its object: GenerationChangedPredicate or
// ReconcileRequestedPredicate.
//
// Flux objects carry a spec.interval and a controller requeues each one at it: success is
// a result that requeues at Interval. The examples' kinds have no interval, so the
// operators use Interval for all; while a child is not done they requeue at
// RetryInterval (Flux's spec.retryInterval), a result that is no success, so that
// Reconciling stays. The owned children's events bring an object back sooner, through
// Owns, as source-controller's watches of what it depends on do.
//
// The Keyval has the example's finalizer, handled as image-automation-controller handles
// its own: Reconcile adds it with controllerutil before anything else and requeues (the
// final patch writes it), and a deleted Keyval's reconcileDelete runs the example's
// cleanup (with spec.storage.whenDeleted Delete, its StatefulSet and then its volume
// claims, looked at again until they are gone) before it removes the finalizer. The other
// kinds have none: Flux controllers add one to delete the artifacts they store, and these
// operators store none; their children go with garbage collection, as the examples'.
package flux

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	runtimereconcile "github.com/fluxcd/pkg/runtime/reconcile"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/test/benchmark/peers/internal/child"
)

const (
	// Interval is how often a Flux controller reconciles an object on its own: the
	// spec.interval these kinds do not have.
	Interval = 10 * time.Minute
	// RetryInterval is when an object whose children are not done yet comes back if no
	// event of theirs brings it back sooner.
	RetryInterval = time.Minute

	// Available, Progressing and Degraded are the conditions of a Memcached and a PodSet
	// that report their Deployment's rollout, as the examples report it (its API's
	// status): available, rolling out, failed.
	Available   = "Available"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	// Succeeded is the condition of an At that says its command succeeded.
	Succeeded = "Succeeded"
)

// isSuccess is what success means to these reconcilers: no error, and the requeue at the
// interval (a SuccessWithRequeue reconciler, as image-automation-controller's).
func isSuccess(res ctrl.Result, err error) bool {
	return err == nil && res.RequeueAfter == Interval
}

// patchOptions are the options of every patch of an object, as getPatchOptions in
// image-automation-controller makes them.
func patchOptions(owned []string, fieldOwner string) []patch.Option {
	return []patch.Option{
		patch.WithOwnedConditions{Conditions: owned},
		patch.WithFieldOwner(fieldOwner),
	}
}

// patchAtTheEnd is the final patch Reconcile defers: the status the reconcile left, with
// observedGeneration once Ready or Stalled. A not-found answer for an object being
// deleted is no error; an error leaves the result empty.
func patchAtTheEnd(ctx context.Context, sp *patch.SerialPatcher, obj conditions.Setter, opts []patch.Option, owned []string, fieldOwner string, result *ctrl.Result, retErr *error) {
	patchOpts := runtimereconcile.AddPatchOptions(obj, opts, owned, fieldOwner)
	if err := sp.Patch(ctx, obj, patchOpts...); err != nil {
		if !obj.GetDeletionTimestamp().IsZero() {
			err = kerrors.FilterOut(err, apierrors.IsNotFound)
		}
		*retErr = kerrors.NewAggregate([]error{*retErr, err})
	}
	if *retErr != nil {
		*result = ctrl.Result{}
	}
}

// progress marks the object Reconciling and, for a new generation, persists that at
// once, as Flux controllers do before they act.
func progress(ctx context.Context, sp *patch.SerialPatcher, obj conditions.Setter, generation, observed int64, opts []patch.Option) error {
	runtimereconcile.ProgressiveStatus(false, obj, meta.ProgressingReason, "reconciliation in progress")
	if generation == observed {
		return nil
	}
	runtimereconcile.ProgressiveStatus(false, obj, meta.ProgressingReason, "processing object: new generation %d -> %d", observed, generation)
	return sp.Patch(ctx, obj, opts...)
}

// rollout marks obj Available, Progressing and Degraded from its Deployment dep, as the
// examples do, and reports whether dep has rolled out.
func rollout(obj conditions.Setter, dep *appsv1.Deployment) bool {
	message := fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, child.Replicas(dep))
	done := child.DeploymentAvailable(dep)
	if done {
		conditions.MarkTrue(obj, Available, "MinimumReplicasAvailable", "%s", message)
		conditions.MarkFalse(obj, Progressing, "RolloutComplete", "%s", message)
	} else {
		conditions.MarkFalse(obj, Available, "RollingOut", "%s", message)
		conditions.MarkTrue(obj, Progressing, "RollingOut", "%s", message)
	}
	if child.DeploymentFailed(dep) {
		conditions.MarkTrue(obj, Degraded, "ProgressDeadlineExceeded", "%s", message)
	} else {
		conditions.MarkFalse(obj, Degraded, "RollingOut", "%s", message)
	}
	return done
}
