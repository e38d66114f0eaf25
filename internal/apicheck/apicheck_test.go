package apicheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository's directory, from this package's.
const root = "../.."

// release is the library of the recorded release in each case: a package with a function, a
// type with a method, and what is not API (an internal package, a command, an example).
var release = map[string]string{
	"go.mod":                "module example.com/lib\n\ngo 1.26\n",
	"shapes/shapes.go":      "package shapes\n\nfunc Area(w, h int) int { return w * h }\n\ntype Square struct{ Side int }\n\nfunc (s *Square) Grow() { s.Side++ }\n",
	"internal/calc/calc.go": "package calc\n\nfunc Twice(n int) int { return 2 * n }\n",
	"cmd/tool/main.go":      "package main\n\nfunc Tool() {}\n\nfunc main() {}\n",
	"examples/demo/demo.go": "package demo\n\nfunc Demo() {}\n",
	"CHANGELOG.md":          "# Changelog\n\n## [Unreleased]\n\n### Breaking\n",
}

// withoutArea is the release's shapes package without its function.
const withoutArea = "package shapes\n\ntype Square struct{ Side int }\n\nfunc (s *Square) Grow() { s.Side++ }\n"

func TestAPICheck(t *testing.T) {
	apidiff := tool(t)
	for _, c := range []struct {
		name string
		// released replaces files of the release; changed, of the working tree after it
		// ("" removes a file).
		released, changed map[string]string
		commit            string // the recorded commit, when not the release's
		wantFail          bool
		want              []string // in the output
	}{{
		name: "no change passes",
		want: []string{"1 library packages of v0.1.0", "0 incompatible change(s)"},
	}, {
		name: "a compatible addition passes: a function, a package",
		changed: map[string]string{
			"shapes/more.go":    "package shapes\n\nfunc Perimeter(w, h int) int { return 2 * (w + h) }\n",
			"circles/circle.go": "package circles\n\nfunc Area(r float64) float64 { return 3 * r * r }\n",
		},
		want: []string{"0 incompatible change(s)"},
	}, {
		name:     "an unlisted removal fails, naming it and where to list it",
		changed:  map[string]string{"shapes/shapes.go": withoutArea},
		wantFail: true,
		want:     []string{"shapes.Area: removed", `under "### Breaking" of "## [Unreleased]" in CHANGELOG.md`, "- `shapes.Area`: ..."},
	}, {
		name: "the removal listed under Breaking passes",
		changed: map[string]string{
			"shapes/shapes.go": withoutArea,
			"CHANGELOG.md":     "# Changelog\n\n## [Unreleased]\n\n### Breaking\n- `shapes.Area` is gone: multiply the sides.\n",
		},
		want: []string{"1 incompatible change(s), all listed as breaking"},
	}, {
		name: "the removal listed under another heading fails",
		changed: map[string]string{
			"shapes/shapes.go": withoutArea,
			"CHANGELOG.md":     "# Changelog\n\n## [Unreleased]\n\n### Breaking\n\n### Removed\n- `shapes.Area`\n",
		},
		wantFail: true,
		want:     []string{"shapes.Area: removed"},
	}, {
		name: "a method's change is covered by its type's name",
		changed: map[string]string{
			"shapes/shapes.go": strings.Replace(release["shapes/shapes.go"], "Grow() { s.Side++ }", "Grow(by int) { s.Side += by }", 1),
			"CHANGELOG.md":     "# Changelog\n\n## [Unreleased]\n\n### Breaking\n- `shapes.Square`: Grow takes how much.\n",
		},
		want: []string{"1 incompatible change(s), all listed as breaking"},
	}, {
		name:     "a method's change unlisted fails, naming the method without the receiver's star",
		changed:  map[string]string{"shapes/shapes.go": strings.Replace(release["shapes/shapes.go"], "Grow() { s.Side++ }", "Grow(by int) { s.Side += by }", 1)},
		wantFail: true,
		want:     []string{"shapes.Square.Grow: changed from func() to func(int)"},
	}, {
		name:     "a moved package fails, naming the package",
		changed:  map[string]string{"shapes/shapes.go": "", "geometry/shapes.go": release["shapes/shapes.go"]},
		wantFail: true,
		want:     []string{"shapes: package removed or moved"},
	}, {
		name: "a moved package listed passes",
		changed: map[string]string{"shapes/shapes.go": "", "geometry/shapes.go": release["shapes/shapes.go"],
			"CHANGELOG.md": "# Changelog\n\n## [Unreleased]\n\n### Breaking\n#### Moved\n- `shapes` is `geometry` now.\n"},
		want: []string{"1 incompatible change(s), all listed as breaking"},
	}, {
		name:     "a package split into a module of its own, at the same import path, is still compared",
		changed:  map[string]string{"shapes/go.mod": "module example.com/lib/shapes\n\ngo 1.26\n", "shapes/shapes.go": withoutArea},
		wantFail: true,
		want:     []string{"shapes.Area: removed"},
	}, {
		name: "internal packages, commands and examples are not API",
		changed: map[string]string{
			"internal/calc/calc.go": "package calc\n",
			"cmd/tool/main.go":      "package main\n\nfunc main() {}\n",
			"examples/demo/demo.go": "package demo\n",
		},
		want: []string{"0 incompatible change(s)"},
	}, {
		name: "the version being cut counts as unreleased",
		changed: map[string]string{
			"shapes/shapes.go": withoutArea,
			"CHANGELOG.md":     "# Changelog\n\n## [Unreleased]\n\n### Breaking\n\n## [v0.2.0] - 2026-12-01\n\n### Breaking\n- `shapes.Area`\n",
		},
		want: []string{"1 incompatible change(s), all listed as breaking"},
	}, {
		name:     "a Breaking list the release already had does not count",
		released: map[string]string{"CHANGELOG.md": "# Changelog\n\n## [Unreleased]\n\n## [v0.1.0]\n\n### Breaking\n- `shapes.Area`\n"},
		changed:  map[string]string{"shapes/shapes.go": withoutArea},
		wantFail: true,
		want:     []string{"shapes.Area: removed"},
	}, {
		name:     "a release commit missing from the clone fails, naming git fetch --unshallow",
		commit:   strings.Repeat("ab", 20),
		wantFail: true,
		want:     []string{"not in this clone", "git fetch --unshallow"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, dir, release)
			write(t, dir, c.released)
			git(t, dir, "init", "-q")
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-q", "-m", "v0.1.0")
			commit := c.commit
			if commit == "" {
				commit = git(t, dir, "rev-parse", "HEAD")
			}
			write(t, dir, map[string]string{"hack/release/v0.1.0": commit + "\n"})
			write(t, dir, c.changed)

			script, err := filepath.Abs(filepath.Join(root, "hack", "api-check.sh"))
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "APIDIFF="+apidiff)
			out, err := cmd.CombinedOutput()
			t.Logf("hack/api-check.sh:\n%s", out)
			if failed := err != nil; failed != c.wantFail {
				t.Fatalf("failed = %v (%v), want %v", failed, err, c.wantFail)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the output lacks %q", w)
				}
			}
		})
	}
}

// tool builds the apidiff of hack/tools/go.mod and returns its path.
func tool(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "tool", "-modfile=hack/tools/go.mod", "-n", "apidiff")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool -n apidiff: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// write writes files under dir; an empty content removes the file.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if content == "" {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// git runs git in dir as a test author and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
