// Package phase drives an object whose status has a phase (PENDING, RUNNING, DONE) through
// declared phases and transitions, one handler per phase. A Machine is a reconcile.Logic: the
// shell runs it like any other, and it reports the phase as Reconciling, Ready or Stalled, so
// kubectl wait and kstatus understand the object without knowing its phases.
//
// It is apart from reconcile because it is one shape of logic among others, not part of the
// shell: an operator without a phase never sees it, and the shell knows nothing of it.
package phase
