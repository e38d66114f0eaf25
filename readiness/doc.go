// Package readiness reads how an owned workload is doing, for its owner's status: whether it
// serves and how far its latest change has rolled out (a State, which State.Mark records in
// the owner's Available, Progressing and Degraded conditions), its counts for the owner's
// scale subresource (Scale), and its pods (Pods, StatefulSetPods).
//
// Deployment and StatefulSet read the two workloads an operator owns most, fast and with a
// reason and message that change only when a count does; Of reads any other object by
// kstatus' rules. Available keeps one meaning for every kind: the workload serves, so an
// alert on it fires on an outage, not on a rollout or a resize. Changed says which updates
// of a child change what its owner reports, so that the reconcile shell lets those through
// at once.
package readiness
