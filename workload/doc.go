// Package workload builds the desired workloads an operator owns, ready for ownership.Ensure:
// a Deployment (AutoscaledDeployment when an autoscaler sets its replicas), a StatefulSet with
// the claims of its pods (ClaimTemplate), the headless Service that names those pods, a
// PodDisruptionBudget, and pods restricted as Pod Security's restricted level asks
// (Restricted). Each builder derives what must agree (the selector from the template's
// labels, the StatefulSet's serviceName from its name) so that the caller cannot get it
// wrong. How a workload is doing is package readiness's business.
package workload
