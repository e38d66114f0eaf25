package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedianTakesEachFieldsMiddleValueOnItsOwn(t *testing.T) {
	got := median([]measurement{
		{Converge: 3, Writes: 10, HeapPerObject: 5},
		{Converge: 1, Writes: 30, HeapPerObject: 4},
		{Converge: 2, Writes: 20, HeapPerObject: 6},
	})
	want := measurement{Converge: 2, Writes: 20, HeapPerObject: 5}
	if got != want {
		t.Errorf("median = %+v, want %+v", got, want)
	}
}

func TestMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo(t *testing.T) {
	got := median([]measurement{{Converge: 4}, {Converge: 1}, {Converge: 2}, {Converge: 9}})
	if got.Converge != 3 {
		t.Errorf("median converge = %v, want 3", got.Converge)
	}
}

func TestSummaryReportsTheWorstKindAgainstTheIdealAndTheSeed(t *testing.T) {
	memcached, at := kindNamed("memcached"), kindNamed("at")
	r := &report{n: 100, kinds: []*kind{memcached, at}, medians: map[*kind]map[string]measurement{
		memcached: {
			ideal:     {Converge: 10, Writes: 400},
			fullIdeal: {Converge: 11, Writes: 400},
			seeded:    {Converge: 20, Writes: 500, ResyncWrites: 100},
			library:   {Converge: 12, Writes: 300},
		},
		at: {
			ideal:     {Converge: 2, Writes: 300},
			fullIdeal: {Converge: 3.2, Writes: 300},
			seeded:    {Converge: 5, Writes: 400},
			library:   {Converge: 4, Writes: 300, ResyncWrites: 1},
		},
	}}
	want := "summary: steady_writes=1 writes_per_object=3.00 time_vs_ideal=2.00 writes_vs_ideal=1.00 time_vs_full_ideal=1.25 time_vs_seed=0.80 writes_vs_seed=0.75"
	if got := r.summary(); got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
}

func TestSummaryComparesTheProcessWithTheBestPeerOfEachKind(t *testing.T) {
	memcached, at := kindNamed("memcached"), kindNamed("at")
	r := &report{n: 100, kinds: []*kind{memcached, at}, medians: map[*kind]map[string]measurement{
		memcached: {
			fluxStyle:      {Converge: 10, Writes: 900},
			capiStyle:      {Converge: 8, Writes: 1000},
			library:        {Converge: 1, Writes: 1},   // in process: not what the peers are compared with
			libraryProcess: {Converge: 6, Writes: 450}, // 0.75 of CAPI's time, 0.50 of Flux's writes
		},
		at: {
			fluxStyle:      {Converge: 4, Writes: 500},
			capiStyle:      {Converge: 5, Writes: 400},
			libraryProcess: {Converge: 4.4, Writes: 300}, // 1.10 of Flux's time, 0.75 of CAPI's writes
		},
	}}
	if got, want := r.summary(), "time_vs_best_peer=1.10 writes_vs_best_peer=0.75"; !strings.HasSuffix(got, want) {
		t.Errorf("summary:\n got %s\nwant it to end %s", got, want)
	}
}

func TestSummaryComparesTheInProcessOperatorWhenNoProcessWasMeasured(t *testing.T) {
	podset := kindNamed("podset")
	r := &report{n: 10, kinds: []*kind{podset}, medians: map[*kind]map[string]measurement{
		podset: {fluxStyle: {Converge: 4, Writes: 80}, library: {Converge: 2, Writes: 40}},
	}}
	if got, want := r.summary(), "time_vs_best_peer=0.50 writes_vs_best_peer=0.50"; !strings.HasSuffix(got, want) {
		t.Errorf("summary:\n got %s\nwant it to end %s", got, want)
	}
}

func TestSummaryLeavesThePeersOutWhenNoneWasMeasured(t *testing.T) {
	at := kindNamed("at")
	r := &report{n: 10, kinds: []*kind{at}, medians: map[*kind]map[string]measurement{at: {library: {Converge: 2, Writes: 40}}}}
	if got := r.summary(); strings.Contains(got, "peer") {
		t.Errorf("summary %q compares with a peer that was not measured", got)
	}
}

func TestThePrintedTableEndsWithTheSummary(t *testing.T) {
	memcached := kindNamed("memcached")
	r := &report{n: 10, rounds: 1, nodes: 1, kinds: []*kind{memcached}, medians: map[*kind]map[string]measurement{
		memcached: {ideal: {Converge: 1, Writes: 40}, seeded: {Converge: 2, Writes: 50}, library: {Converge: 1, Writes: 30}},
	}}
	var out bytes.Buffer
	r.print(&out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != r.summary() {
		t.Errorf("the last line is %q, want the summary %q", last, r.summary())
	}
}

func TestRecordReplacesTheResultsOfItsNAndKeepsTheOthers(t *testing.T) {
	dir := t.TempDir()
	results, chart := filepath.Join(dir, "results.json"), filepath.Join(dir, "chart.svg")
	memcached := kindNamed("memcached")
	at := func(n int, converge float64) *report {
		return &report{n: n, rounds: 1, kinds: []*kind{memcached}, medians: map[*kind]map[string]measurement{
			memcached: {ideal: {Converge: converge}, seeded: {Converge: converge}, library: {Converge: converge}},
		}}
	}
	for _, r := range []*report{at(50, 1), at(200, 2), at(50, 3)} {
		if err := r.record(results, chart); err != nil {
			t.Fatal(err)
		}
	}

	data, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var got []result
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	converge := map[int]float64{}
	for _, r := range got {
		converge[r.N] += r.Median.Converge
	}
	if len(got) != 6 || converge[50] != 9 || converge[200] != 6 {
		t.Errorf("results = %+v, want the three implementations at N=50 (converge 3) and N=200 (converge 2)", got)
	}
	if _, err := os.Stat(chart); err != nil {
		t.Errorf("no chart: %v", err)
	}
}

func TestTheChartIsWellFormedSVGWithALinePerFigureKindAndImplementation(t *testing.T) {
	var results []result
	for _, k := range kinds {
		for _, impl := range implementations {
			for _, n := range []int{50, 200, 1000} {
				results = append(results, result{N: n, Kind: k.name, Implementation: impl, Median: measurement{Converge: float64(n) / 20, APIServerCPU: float64(n) / 100}})
			}
		}
	}
	svg := chart(results)

	decoder := xml.NewDecoder(bytes.NewReader(svg))
	lines := 0
	for {
		token, err := decoder.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v\n%s", err, svg)
		}
		if start, ok := token.(xml.StartElement); ok && start.Name.Local == "polyline" {
			lines++
		}
	}
	if want := len(figures) * len(kinds) * len(implementations); lines != want {
		t.Errorf("the chart has %d lines, want %d", lines, want)
	}
}

func TestNiceStepIsOneTwoOrFiveTimesAPowerOfTen(t *testing.T) {
	for _, tc := range []struct {
		span  float64
		ticks int
		want  float64
	}{
		{span: 1000, ticks: 4, want: 500},
		{span: 200, ticks: 4, want: 50},
		{span: 17, ticks: 4, want: 5},
		{span: 3.2, ticks: 4, want: 1},
		{span: 0, ticks: 4, want: 1},
	} {
		if got := niceStep(tc.span, tc.ticks); got != tc.want {
			t.Errorf("niceStep(%v, %d) = %v, want %v", tc.span, tc.ticks, got, tc.want)
		}
	}
}
