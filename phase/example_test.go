package phase_test

import (
	"context"
	"fmt"
	"time"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/phase"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// A Widget is PENDING until it is picked up, RUNNING until its work is finished, then DONE.
// Each reconcile takes it as far as it can go, and says how far it is: Reconciling in a
// phase with a handler, nothing (so Ready, for the shell) in a terminal one.
func ExampleMachine_Reconcile() {
	finished := false
	machine, err := phase.New("PENDING", map[string]phase.State[*Widget]{
		"PENDING": {
			Handle: func(context.Context, *Widget, reconcile.Scope) (string, requeue.Outcome) {
				return "RUNNING", requeue.Done()
			},
			Next: []string{"RUNNING"},
		},
		"RUNNING": {
			Handle: func(context.Context, *Widget, reconcile.Scope) (string, requeue.Outcome) {
				if !finished {
					return "", requeue.After(time.Minute) // look again in a minute
				}
				return "DONE", requeue.Done()
			},
			Next: []string{"DONE"},
		},
		"DONE": {}, // terminal
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	w := &Widget{} // new, without a phase
	show := func(outcome requeue.Outcome) {
		fmt.Printf("%s: Reconciling=%t, %s\n", w.Status.Phase, conditions.IsTrue(w, conditions.Reconciling), outcome)
		conditions.Remove(w, conditions.Reconciling) // as the shell does before each reconcile
	}
	show(machine.Reconcile(context.Background(), w, reconcile.Scope{}))
	finished = true
	show(machine.Reconcile(context.Background(), w, reconcile.Scope{}))
	show(machine.Reconcile(context.Background(), w, reconcile.Scope{}))
	// Output:
	// RUNNING: Reconciling=true, after 1m0s
	// DONE: Reconciling=false, done
	// DONE: Reconciling=false, done
}

// A definition that names a phase it does not declare is refused before anything runs.
func ExampleNew() {
	_, err := phase.New("PENDING", map[string]phase.State[*Widget]{
		"PENDING": {
			Handle: func(context.Context, *Widget, reconcile.Scope) (string, requeue.Outcome) {
				return "RUNNING", requeue.Done()
			},
			Next: []string{"RUNNING"},
		},
	})
	fmt.Println(err)
	// Output:
	// phase "PENDING" may move to "RUNNING", which is not declared
}
