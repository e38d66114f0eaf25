package explore

import (
	"strings"
	"testing"
)

func TestAnExplorationWhoseMutantCouldBeNeitherCaughtNorMissedIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    Exploration
		// want is what the error must say; "" means none.
		want []string
	}{
		{"a correct operator", Exploration{}, nil},
		{"a mutant caught by named oracles", Exploration{Mutant: "bug", CaughtBy: []Oracle{EndState, SpecNotReached}}, nil},
		{"a mutant without CaughtBy", Exploration{Mutant: "bug"}, []string{`the mutant "bug" names no oracle`, "set CaughtBy"}},
		{"a misspelt oracle", Exploration{Mutant: "bug", CaughtBy: []Oracle{"end-state"}}, []string{`CaughtBy names "end-state", which is no oracle`, "end state, created twice"}},
		{"CaughtBy without a mutant", Exploration{CaughtBy: []Oracle{EndState}}, []string{"without a Mutant"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.x.validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error saying %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestEveryOracleIsListedOnceWithADistinctName(t *testing.T) {
	seen := map[Oracle]bool{}
	for _, o := range Oracles {
		if o == "" || seen[o] {
			t.Errorf("Oracles lists %q twice or empty", o)
		}
		seen[o] = true
	}
	if len(Oracles) != 13 {
		t.Errorf("Oracles lists %d oracles, the package declares 13", len(Oracles))
	}
}

func TestStopAtFirstStopsAtTheMutantsOraclesOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    Exploration
		v    Oracle
		want bool
	}{
		{"the mutant's oracle", Exploration{Mutant: "bug", CaughtBy: []Oracle{SpecNotReached}}, SpecNotReached, true},
		{"an unrelated alarm", Exploration{Mutant: "bug", CaughtBy: []Oracle{SpecNotReached}}, EndState, false},
		{"any oracle without a mutant", Exploration{}, EndState, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.x.stopsAt(Violation{Oracle: tc.v}); got != tc.want {
				t.Errorf("stops at %q: %v, want %v", tc.v, got, tc.want)
			}
		})
	}
}
