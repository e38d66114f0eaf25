// Package ownership keeps the objects an operator owns in the state it wants, and nothing more.
//
// Ensure is the heart of it: it creates a missing object, writes nothing when the live object
// already matches (so a converged operator makes no write requests), reverts drift on the fields
// the operator sets, removes fields the operator stopped setting, leaves every other field to
// whoever set it, and refuses to touch an object that it does not control. Server defaults never
// cause an update, because only fields the desired object sets are compared.
//
// Controller references are checked by UID, and owners the API server would garbage-collect out
// from under the operator (another namespace, a namespaced owner of a cluster-scoped object) are
// refused with a typed error before anything is written.
//
// Delete removes a child that is no longer desired, and EnsureSet keeps a set of children of
// one kind (one per replica, shard or user), deleting the members no longer desired; both
// touch only what the owner controls and send nothing once converged.
//
// IndexReferences and EnqueueReferencing reconcile the owners that reference an object they
// do not own (a ConfigMap, a Secret) when it changes; SetConfigHash rolls a workload when
// that object's data changes, and not otherwise.
//
// DeploymentReadiness and Readiness.Mark report an owned Deployment's availability and rollout
// in the owner's conditions; ReadinessOf reads any other kind by kstatus' rules;
// AutoscaledDeployment leaves a Deployment's replicas to an autoscaler; TransformCompact
// keeps the manager's cache of owned objects small.
package ownership
