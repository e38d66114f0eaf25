package reconcile

import (
	"errors"
	"fmt"
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/writerpolicy"
	"github.com/reconcilekit/reconcilekit/ownership"
)

// The fight detector: each shell has one of its own, which it binds to every Writer it
// makes, and a fight is reported by the Writer, not again by the shell.
func TestTheFightDetector(t *testing.T) {
	a, b := newFights(), newFights()
	if a.detector == nil || a.detector == b.detector {
		t.Fatal("two shells share a fight detector, or have none: a fight in one manager would hold back another's writes")
	}
	var p writerpolicy.Policy
	a.bind(&p)
	if p.Fights != a.detector {
		t.Error("the Writer's policy does not consult the shell's detector")
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&ownership.FightingError{Kind: "ConfigMap"}, true},
		{fmt.Errorf("ensure: %w", &ownership.FightingError{Kind: "ConfigMap"}), true},
		{errors.New("boom"), false},
		{nil, false},
	} {
		if got := a.reported(tc.err); got != tc.want {
			t.Errorf("reported(%v) = %t; want %t", tc.err, got, tc.want)
		}
	}
}
