package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	tally.write(os.Stdout)
	// Output:
	// --- PASS: TestCrashes (1.00s)
	// --- FAIL: TestRestart (2.00s)
	// scenarios:
	//   passed  p TestCrashes
	//   failed  p TestRestart
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
		{"a fuzz run that fuzzed nothing has failed, though go test passed it", []string{
			`{"Action":"start","Package":"p"}`,
			`{"Action":"output","Package":"p","Output":"testing: warning: no fuzz tests to fuzz\n"}`,
			`{"Action":"pass","Package":"p"}`,
			`{"Action":"run","Package":"q","Test":"FuzzA"}`,
			`{"Action":"pass","Package":"q","Test":"FuzzA"}`,
			`{"Action":"pass","Package":"q"}`,
		}, "2 scenarios, 1 passed, 1 failed"},
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

// The fuzz step of make test-reliability (hack/fuzz.sh -json) takes its targets from the
// code, so the count the report prints follows the code: a target removed is one scenario
// fewer, and none is left unfuzzed.
func TestTheFuzzStepCountsTheTargetsInTheCode(t *testing.T) {
	script, err := filepath.Abs("../../../hack/fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	module := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(module, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(module, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fuzzer := func(name string) string {
		return "package p\n\nimport \"testing\"\n\nfunc " + name + "(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }\n"
	}
	write("go.mod", "module scratch\n\ngo 1.26\n")
	write("p/a_test.go", fuzzer("FuzzA"))
	write("q/b_test.go", fuzzer("FuzzB"))

	report := func() (tally, string) {
		t.Helper()
		cmd := exec.Command(script, "-json", "20x")
		cmd.Dir = module
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		events, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, events)
		}
		var out bytes.Buffer
		tally, err := summarize(bytes.NewReader(events), &out)
		if err != nil {
			t.Fatal(err)
		}
		tally.write(&out)
		return tally, out.String()
	}

	tally, out := report()
	if got, want := tally.String(), "2 scenarios, 2 passed, 0 failed"; got != want {
		t.Fatalf("two fuzz targets: got %q, want %q\n%s", got, want, out)
	}
	for _, name := range []string{"passed  p FuzzA", "passed  q FuzzB", "execs:"} {
		if !strings.Contains(out, name) {
			t.Errorf("the report does not show %q:\n%s", name, out)
		}
	}

	if err := os.Remove(filepath.Join(module, "q/b_test.go")); err != nil {
		t.Fatal(err)
	}
	write("q/b_test.go", "package p\n")
	if tally, out := report(); tally.String() != "1 scenarios, 1 passed, 0 failed" {
		t.Errorf("FuzzB removed: got %q, want one scenario fewer\n%s", tally, out)
	}
}
