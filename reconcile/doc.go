// Package reconcile is the shell around an operator's own logic for one object type.
//
// The shell does what every reconciler must do and most get subtly wrong: it reads the
// object (a deleted object is not an error), runs the logic, and then writes the status once,
// only if it changed, through the status subresource with observedGeneration set, guarded by
// an optimistic lock so a stale read never overwrites newer status. A conflict is a quiet
// requeue, not an error in the log. The logic returns a requeue.Outcome, which the shell turns
// into controller-runtime's result without ever losing a delay. Finalizers are added before the
// logic first runs and removed once cleanup is done.
//
// Machine adds a phase state machine for objects whose status has a phase (PENDING, RUNNING,
// DONE): declared phases and transitions, one handler per phase, and the phase mirrored into
// conditions so tools that read conditions understand the object.
//
// Coalesce wraps the event handler of owned objects, so that a burst of their updates (a
// rollout) makes one reconcile, and one status write, rather than one each.
package reconcile
