// Package reconcile is the shell around an operator's own logic for one object type, and the
// declaration that wires it.
//
// For declares a controller once: the kind it reconciles, its Logic, its field owner, and,
// through its options (WithChildren, WithCache, WithWatch, WithConcurrency...) and the
// methods whose functions take the reconciled type (WithFinalizer, WithSuspend,
// WithReferences, WithDefaulter, WithValidator, WithConversion), everything else
// controller-runtime must be told. A mistake of type is a compile error. Manager makes the
// controller-runtime manager from the declarations, deriving the watches, the indexes, the
// cache's restrictions and transform, a readiness check that waits for the caches, and the
// metrics, and refuses wiring that cannot work with a message that names the fix.
//
// The shell does what every reconciler must do and most get subtly wrong: it reads the
// object (a deleted object is not an error), runs the logic with a Scope (the reconcile's
// time, and the ownership.Writer of the object's children), and then writes the status once,
// only if it changed, through the status subresource with observedGeneration set, guarded by
// an optimistic lock so a stale read never overwrites newer status. It keeps the Ready,
// Reconciling and Stalled conditions kstatus reads. A conflict is a quiet requeue, not an
// error in the log. The logic returns a requeue.Outcome, which the shell turns into
// controller-runtime's result without ever losing a delay. Finalizers are added before the
// logic first runs and removed once cleanup is done.
//
// A Logic may be the operator's own function (LogicFunc) or one made for a shape of logic,
// such as package phase's Machine for objects whose status has a phase.
//
// The events of a declared child kind (WithChildren) are coalesced onto the owner, so that
// a burst of updates (a rollout) makes one reconcile, and one status write, rather than one
// each, while a change of the child's readiness goes through at once.
package reconcile
