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
// DeploymentReadiness and Readiness.Mark report an owned Deployment's availability and rollout
// in the owner's conditions; AutoscaledDeployment leaves its replicas to an autoscaler;
// TransformCompact keeps the manager's cache of owned objects small.
package ownership
