package layout

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// listsAllowed are the directories outside the examples' own that may name every example,
// and why.
var listsAllowed = map[string]string{
	"examples/demo/":             "the demo runs and describes each operator, whose packages it imports by name",
	"cmd/newoperator/templates/": "the archives of the templates, made from the examples' directories",
}

// The examples are the directories of examples/ that hold a kubebuilder PROJECT file, and
// that is the one list of them: hack/generate.sh, the Makefile, newoperator and the tests
// read it, so that a new example is its directory alone. A script or source file that
// names every example within three lines is another list, which a new example would have
// to be added to. Prose (*.md) may name them.
func TestTheExamplesAreListedOnlyByTheirDirectories(t *testing.T) {
	root := filepath.Join("..", "..")
	projects, err := filepath.Glob(filepath.Join(root, "examples", "*", "PROJECT"))
	if err != nil || len(projects) < 2 {
		t.Fatalf("examples/*/PROJECT: %d examples, %v", len(projects), err)
	}
	var names []*regexp.Regexp
	var own []string
	for _, p := range projects {
		name := filepath.Base(filepath.Dir(p))
		names = append(names, regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(name)+`\b`))
		own = append(own, "examples/"+name+"/")
	}
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, file := range strings.Fields(string(out)) {
		if strings.HasSuffix(file, ".md") || hasPrefix(own, file) || hasPrefix(slices.Collect(maps.Keys(listsAllowed)), file) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			continue // a file of the index that the work tree lacks, or a directory
		}
		lines := strings.Split(string(data), "\n")
		for i := range lines {
			window := strings.Join(lines[i:min(i+3, len(lines))], "\n")
			if all(names, window) {
				t.Errorf("%s:%d names every example: derive the list from examples/*/PROJECT instead, so that a new example is its directory alone", file, i+1)
				break
			}
		}
	}
}

func all(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

func hasPrefix(prefixes []string, s string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
