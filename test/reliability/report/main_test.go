package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// The report passes the tests' output through and counts the scenarios after it.
func Example() {
	events := `{"Action":"run","Package":"p","Test":"TestCrashes"}
{"Action":"output","Package":"p","Test":"TestCrashes","Output":"--- PASS: TestCrashes (1.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestCrashes"}
{"Action":"run","Package":"p","Test":"TestRestart"}
{"Action":"output","Package":"p","Test":"TestRestart","Output":"--- FAIL: TestRestart (2.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestRestart"}
{"Action":"fail","Package":"p"}
`
	tally, _ := summarize(strings.NewReader(events), os.Stdout)
	fmt.Println(tally)
	// Output:
	// --- PASS: TestCrashes (1.00s)
	// --- FAIL: TestRestart (2.00s)
	// 2 scenarios, 1 passed, 1 failed
}

func TestSummarizeCountsScenarios(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string
		want   string
	}{
		{"nothing run is nothing passed", nil, "0 scenarios, 0 passed, 0 failed"},
		{"subtests count towards their parent", []string{
			`{"Action":"run","Package":"p","Test":"TestA"}`,
			`{"Action":"run","Package":"p","Test":"TestA/one"}`,
			`{"Action":"fail","Package":"p","Test":"TestA/one"}`,
			`{"Action":"fail","Package":"p","Test":"TestA"}`,
			`{"Action":"fail","Package":"p"}`,
		}, "1 scenarios, 0 passed, 1 failed"},
		{"a skipped scenario has not passed", []string{
			`{"Action":"run","Package":"p","Test":"TestA"}`,
			`{"Action":"skip","Package":"p","Test":"TestA"}`,
			`{"Action":"pass","Package":"p"}`,
		}, "1 scenarios, 0 passed, 1 failed"},
		{"a scenario cut short by its binary's death has failed", []string{
			`{"Action":"run","Package":"p","Test":"TestA"}`,
			`{"Action":"output","Package":"p","Test":"TestA","Output":"panic: test timed out after 30m0s\n"}`,
			`{"Action":"fail","Package":"p"}`,
		}, "1 scenarios, 0 passed, 1 failed"},
		{"a package that fails on its own is one failed scenario", []string{
			`{"Action":"build-output","ImportPath":"p","Output":"p/x_test.go:1: syntax error\n"}`,
			`{"Action":"fail","Package":"p","FailedBuild":"p"}`,
		}, "1 scenarios, 0 passed, 1 failed"},
		{"fuzz targets of several packages are scenarios", []string{
			`{"Action":"run","Package":"p","Test":"FuzzA"}`,
			`{"Action":"pass","Package":"p","Test":"FuzzA"}`,
			`{"Action":"pass","Package":"p"}`,
			`{"Action":"run","Package":"q","Test":"FuzzA"}`,
			`{"Action":"pass","Package":"q","Test":"FuzzA"}`,
			`{"Action":"pass","Package":"q"}`,
		}, "2 scenarios, 2 passed, 0 failed"},
		{"lines that are not events pass through", []string{
			`# p`,
			`{"Action":"run","Package":"p","Test":"TestA"}`,
			`{"Action":"pass","Package":"p","Test":"TestA"}`,
		}, "1 scenarios, 1 passed, 0 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tally, err := summarize(strings.NewReader(strings.Join(tc.events, "\n")), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := tally.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
