// Report turns the output of `go test -json` into the reliability report: it passes the
// tests' own output through, names each scenario with its result, and ends with one line,
// "N scenarios, N passed, N failed". It exits 1 if a scenario failed.
//
// A scenario is a top-level test or fuzz target; subtests count towards their parent. A
// scenario passes when it reports a pass, so one that was skipped, or never finished
// because its test binary died, has failed. A package that fails with no failed
// scenario of its own (it did not build, say) counts as one failed scenario more, and so
// does a fuzz run that fuzzed nothing (go test's "no fuzz tests to fuzz": the target it
// was asked for is not in the code), which go test itself lets pass.
//
//	cd test && go test -json ./reliability -args -full | go run ./reliability/report
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
)

func main() {
	tally, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(2)
	}
	tally.write(os.Stdout)
	if tally.failed > 0 {
		os.Exit(1)
	}
}

// event is a line of `go test -json` (see `go doc test2json`).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// nothingFuzzed is what go test prints, and then passes, when -fuzz matches no target.
const nothingFuzzed = "no fuzz tests to fuzz"

// tally counts scenarios by how they ended, and names each.
type tally struct {
	scenarios, passed, failed int
	results                   []string // "passed  reliability TestX", in the order they started
}

// count records one scenario's result.
func (t *tally) count(name string, passed bool) {
	t.scenarios++
	result := "failed"
	if passed {
		t.passed++
		result = "passed"
	} else {
		t.failed++
	}
	t.results = append(t.results, result+"  "+name)
}

// String is the closing line alone.
func (t tally) String() string {
	return fmt.Sprintf("%d scenarios, %d passed, %d failed", t.scenarios, t.passed, t.failed)
}

// write writes the report's end: a line a scenario, then the closing line.
func (t tally) write(w io.Writer) {
	fmt.Fprintln(w, "scenarios:")
	for _, r := range t.results {
		fmt.Fprintln(w, "  "+r)
	}
	fmt.Fprintln(w, t)
}

// summarize reads events from in, copies their output to out, and counts the scenarios.
// Lines that are not events, such as a compiler's complaints, are copied as they are.
func summarize(in io.Reader, out io.Writer) (tally, error) {
	type scenario struct{ pkg, test string }
	var (
		order   []scenario            // as they started
		started = map[scenario]bool{} // the scenarios seen
		passed  = map[scenario]bool{} // those that passed
		failing = map[string]bool{}   // packages with a failed scenario
		broken  = map[string]bool{}   // packages that failed
		idle    = map[string]int{}    // fuzz runs that fuzzed nothing, by package
		lines   = bufio.NewScanner(in)
	)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		var e event
		if err := json.Unmarshal(lines.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, lines.Text())
			continue
		}
		if _, err := io.WriteString(out, e.Output); err != nil {
			return tally{}, err
		}
		if strings.Contains(e.Output, nothingFuzzed) {
			idle[e.Package]++
		}
		s := scenario{e.Package, e.Test}
		switch {
		case e.Test == "":
			if e.Action == "fail" {
				broken[e.Package] = true
			}
		case strings.Contains(e.Test, "/"): // a subtest
		case !started[s]:
			started[s] = true
			order = append(order, s)
			fallthrough
		default:
			switch e.Action {
			case "pass":
				passed[s] = true
			case "fail":
				failing[e.Package] = true
			}
		}
	}
	if err := lines.Err(); err != nil {
		return tally{}, err
	}

	var t tally
	for _, s := range order {
		t.count(path.Base(s.pkg)+" "+s.test, passed[s])
		if !passed[s] {
			failing[s.pkg] = true
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(broken)) {
		if !failing[pkg] {
			t.count(path.Base(pkg)+" (the package failed)", false)
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(idle)) {
		for range idle[pkg] {
			t.count(path.Base(pkg)+" (a fuzz run fuzzed nothing: "+nothingFuzzed+")", false)
		}
	}
	return t, nil
}
