package explore

import (
	"os"
	"slices"
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

// TestTheGuideListsEveryOracleInOrderWithItsMoment: docs/exploring.md's table of oracles
// has a row for each oracle of the list, in its order, with its constant and the moment
// it judges at, so that the guide and the package cannot drift apart.
func TestTheGuideListsEveryOracleInOrderWithItsMoment(t *testing.T) {
	guide, err := os.ReadFile("../../../docs/exploring.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for line := range strings.Lines(string(guide)) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) == 5 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		}
	}
	if len(rows) != len(oracles) {
		t.Fatalf("the guide's table of oracles has %d rows, the package %d oracles", len(rows), len(oracles))
	}
	for i, o := range oracles {
		want := []string{string(o.name), "`" + constantName(o.name) + "`", o.at.String()}
		if got := rows[i][:3]; !slices.Equal(got, want) {
			t.Errorf("row %d of the guide's table of oracles is %q, want %q", i+1, got, want)
		}
	}
}

// constantName is the name of the constant of the oracle named name: its words, each
// capitalised ("end state" is EndState).
func constantName(name Oracle) string {
	var b strings.Builder
	for w := range strings.FieldsSeq(string(name)) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}
