package explore_test

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
)

// The matrix explores every mutant with every class, each class at every one of its
// points: too long for make test, made by make test-explore-matrix.
var (
	matrix        = flag.Bool("explore.matrix", false, "explore every mutant with every class at every point of it, and prove each class catches a mutant no other does")
	matrixMutants = flag.String("explore.matrix.mutants", "", "with -explore.matrix, explore only the mutants whose bug this regular expression matches")
)

// families are the classes of perturbation the exploration's proof names, each made of
// classes of Explore: the intermediate states are a crash after a write, a write that
// fails and a write whose answer is lost.
var families = []struct {
	name    string
	classes []explore.Class
}{
	{"intermediate", []explore.Class{explore.Crash, explore.Fail, explore.Lost}},
	{"stale", []explore.Class{explore.Stale}},
	{"unobserved", []explore.Class{explore.Unobserved}},
	{"spec", []explore.Class{explore.Spec}},
}

// cell is what one exploration of a mutant found: the reference run alone (class ""),
// or one class at every point until a run of it is faulted.
type cell struct {
	explored bool
	// caught says a run of the class was faulted; byReference that the reference run,
	// which every exploration makes first, was.
	caught, byReference bool
	runs, points        int // the perturbed runs made (shrinking included), the class's points
	took                time.Duration
	first               string // the first violation
}

func (c cell) String() string {
	switch {
	case !c.explored:
		return "ref" // the reference run catches the mutant, which every class makes first
	case c.byReference:
		return fmt.Sprintf("caught by its reference run %s", c.took.Round(time.Second))
	case c.caught:
		return fmt.Sprintf("caught %d/%d %s", c.runs, c.points, c.took.Round(time.Second))
	}
	return fmt.Sprintf("missed %d/%d %s", c.runs, c.points, c.took.Round(time.Second))
}

// TestMatrixEachClassCatchesAMutantNoOtherDoes explores each mutant with its reference
// run alone and, unless that catches it, with each class alone at every point of it,
// stopping a class at its first faulted run; it prints the mutant x class matrix and
// fails unless every mutant is caught, the ones the reference run is expected to catch by
// it and the others by the class expected, and each family of classes (intermediate,
// stale, unobserved, spec) catches a mutant that no class outside it, nor the reference
// run, catches.
func TestMatrixEachClassCatchesAMutantNoOtherDoes(t *testing.T) {
	if !*matrix {
		t.Skip("explored with -explore.matrix (make test-explore-matrix)")
	}
	only, err := regexp.Compile(*matrixMutants)
	if err != nil {
		t.Fatalf("-explore.matrix.mutants: %v", err)
	}
	operators := map[int]*reconciletest.Operator{}
	for i, m := range mutants {
		if only.MatchString(m.bug) {
			operators[i] = startOn(t, mutantOperator(fmt.Sprintf("matrix-%d", i), m.logic))
		}
	}
	if len(operators) == 0 {
		t.Fatalf("-explore.matrix.mutants %q matches no mutant", *matrixMutants)
	}

	start := time.Now()
	rows := make([]map[explore.Class]cell, len(mutants))
	t.Run("mutants", func(t *testing.T) {
		for i, m := range mutants {
			o, ok := operators[i]
			if !ok {
				continue
			}
			t.Run(strings.ReplaceAll(m.bug, " ", "_"), func(t *testing.T) {
				t.Parallel() // each an operator of its own, in namespaces of its own
				rows[i] = exploreRow(t, o, m)
			})
		}
	})
	if t.Failed() {
		return // an exploration could not be made: its row is not a measure
	}

	var b strings.Builder
	b.WriteString("| mutant | reference run |")
	for _, c := range explore.Classes {
		fmt.Fprintf(&b, " %s |", c)
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" --- |", len(explore.Classes)) + "\n")
	runs := 0
	for i, row := range rows {
		if row == nil {
			continue
		}
		ref := fmt.Sprintf("missed %s", row[""].took.Round(time.Second))
		if row[""].byReference {
			ref = fmt.Sprintf("caught %s", row[""].took.Round(time.Second))
		}
		fmt.Fprintf(&b, "| %s | %s |", mutants[i].bug, ref)
		for _, c := range explore.Classes {
			fmt.Fprintf(&b, " %s |", row[c])
		}
		b.WriteString("\n")
		for _, c := range row {
			runs += c.runs + 1
		}
	}
	fmt.Print(b.String())

	for i, row := range rows {
		if row == nil {
			continue
		}
		m := mutants[i]
		if m.caughtBy == "" && !row[""].byReference {
			t.Errorf("the mutant %q is not caught by the reference run", m.bug)
		}
		if m.caughtBy != "" && !row[m.caughtBy].caught {
			t.Errorf("the mutant %q is not caught by %s", m.bug, m.caughtBy)
		}
		for _, c := range row {
			if c.explored && !c.caught && !c.byReference && c.runs < c.points {
				t.Errorf("the mutant %q: %d runs of %d points, not every point explored (-explore.budget, -explore.replay?)", m.bug, c.runs, c.points)
			}
		}
	}
	var unique []string
	for _, f := range families {
		var theirs []string
		for i, row := range rows {
			if row != nil && caughtOnlyBy(row, f.classes) {
				theirs = append(theirs, fmt.Sprintf("%q", mutants[i].bug))
			}
		}
		if len(theirs) == 0 {
			t.Errorf("no mutant explored is caught by %s (%v) and by no other class", f.name, f.classes)
		}
		unique = append(unique, fmt.Sprintf("%s=[%s]", f.name, strings.Join(theirs, " ")))
	}
	fmt.Printf("matrix: mutants=%d runs=%d seconds=%.0f unique: %s\n",
		len(operators), runs, time.Since(start).Seconds(), strings.Join(unique, " "))
}

// exploreRow explores m with its reference run alone and, unless that catches it, with
// each class alone at every point, until a run of the class is faulted.
func exploreRow(t *testing.T, o *reconciletest.Operator, m mutant) map[explore.Class]cell {
	row := map[explore.Class]cell{}
	ref := exploreCell(t, explore.Exploration{Operator: o, Workload: m.workload(), Mutant: m.bug, CaughtBy: m.oracles, Classes: []explore.Class{}}, "")
	row[""] = ref
	fmt.Printf("matrix: %q reference run: caught=%v %s %s\n", m.bug, ref.byReference, ref.took.Round(time.Second), ref.first)
	if ref.byReference {
		return row
	}
	for _, c := range explore.Classes {
		x := explore.Exploration{Operator: o, Workload: m.workload(), Mutant: m.bug, CaughtBy: m.oracles, Classes: []explore.Class{c}, StopAtFirst: true}
		row[c] = exploreCell(t, x, c)
		// Printed as each is measured: a matrix cut short by its timeout keeps its cells.
		fmt.Printf("matrix: %q %s: %s %s\n", m.bug, c, row[c], row[c].first)
	}
	return row
}

// exploreCell explores x, of class c alone ("" for the reference run alone).
func exploreCell(t *testing.T, x explore.Exploration, c explore.Class) cell {
	r := explore.Explore(t, x)
	got := cell{explored: true, runs: r.Runs - 1, points: r.Points, took: r.Duration}
	for _, v := range r.Violations {
		if v.Class == "" {
			got.byReference = true
		} else if v.Class == c {
			got.caught = true
		}
		if got.first == "" {
			got.first = v.String()
		}
	}
	return got
}

// caughtOnlyBy says that a class of classes caught the mutant of row and that neither
// its reference run nor any other class did.
func caughtOnlyBy(row map[explore.Class]cell, classes []explore.Class) bool {
	caught := false
	for c, got := range row {
		if got.byReference {
			return false
		}
		if got.caught {
			if !slices.Contains(classes, c) {
				return false
			}
			caught = true
		}
	}
	return caught
}
