// Package ownership keeps the objects an operator owns in the state it wants, and nothing more.
//
// Ensure is the heart of it, writing through a Writer: the client, the field owner every
// write carries (required), the recorder of drift and fights, the labels every child gets,
// and the kinds it may write. The reconcile shell gives its logic one filled in from the
// controller's declaration (reconcile.Scope); outside the shell, fill one in. Ensure creates a missing object, writes nothing when the live object
// already matches (so a converged operator makes no write requests), reverts drift on the fields
// the operator sets, removes fields the operator stopped setting, leaves every other field to
// whoever set it, and refuses to touch an object that it does not control. Server defaults never
// cause an update, because only fields the desired object sets are compared.
//
// A request the API server refuses as forbidden comes back as a *ForbiddenError whose Marker
// grants, in one kubebuilder RBAC marker, every verb the call needs on the kind and the
// operator's role lacks.
//
// Controller references are checked by UID, and owners the API server would garbage-collect out
// from under the operator (another namespace, a namespaced owner of a cluster-scoped object) are
// refused with a typed error before anything is written.
//
// Delete removes a child that is no longer desired, and EnsureSet keeps a set of children of
// one kind (one per replica, shard or user), deleting the members no longer desired; both
// touch only what the owner controls and send nothing once converged.
//
// SetConfigHash rolls a workload when the data of an object it references but does not own
// (a ConfigMap, a Secret) changes, and not otherwise; reconcile.WithReferences reconciles
// the owners that reference it. Ensure leaves a StatefulSet's claim templates, which cannot
// change, as they are and reports them (ImmutableError). TransformCompact keeps the manager's
// cache of owned objects small.
//
// What to ensure is other packages' business: package workload builds the usual children
// (a Deployment, a StatefulSet with its claims, a Service, a PodDisruptionBudget), package
// readiness reads how they are doing for the owner's conditions, and package jobs runs and
// prunes the Jobs of a periodic owner.
package ownership
