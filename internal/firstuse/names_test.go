package firstuse_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A template is what a new operator is copied from, as its PROJECT file names it.
type template struct {
	module, group, kind, plural string
	// runsLower says that the kind in lower case, alone, names what the operator runs
	// (memcached, its image and command), which a copy keeps for its author to change.
	runsLower bool
	// englishKind says that the kind is an English word (At), which the copy's prose
	// keeps: it is not searched for.
	englishKind bool
	// versions are the API's versions, the directories of api/ (v1alpha1).
	versions []string
}

// leftovers returns each place, as "file:line: text (the name)", where the copy in dir,
// of API group group, names something of the template it was made from: its module path,
// its API group (also as the API package's import name and in a sample's file name, unless
// the new group starts with the same label), the examples' category,
// and its kind in any spelling (Keyval, keyval, keyvals, KEYVAL, keyval-operator,
// KeyvalSpec, podSet), as a word of its own or of an identifier; but for the lower-case
// kind alone where it names what the operator runs, and for a kind that is an English
// word.
func leftovers(dir string, from template, group string) ([]string, error) {
	names := []string{from.module, from.group, "reconcilekit-examples"}
	// The import name and the sample's file name come from the group's first label, which
	// the new group may share (cache.example.com, cache.acme.io).
	if first, _, _ := strings.Cut(from.group, "."); !strings.HasPrefix(group, first+".") {
		for _, version := range from.versions {
			names = append(names, first+version, first+"_"+version)
		}
	}
	var hits []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		// go.sum and the tools' module list other modules; the file names are searched
		// too.
		if d.Name() == "go.sum" || strings.HasPrefix(rel, filepath.Join("hack", "tools")) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := append([]string{rel}, strings.Split(string(data), "\n")...)
		for i, line := range lines {
			where := fmt.Sprintf("%s:%d", filepath.ToSlash(rel), i)
			if i == 0 {
				where = filepath.ToSlash(rel) + " (its name)"
			}
			lower := strings.ToLower(line)
			for _, name := range names {
				if strings.Contains(lower, strings.ToLower(name)) {
					hits = append(hits, fmt.Sprintf("%s: %s (%s)", where, strings.TrimSpace(line), name))
				}
			}
			if from.englishKind {
				continue
			}
			if word := kindIn(line, from.kind, from.plural, from.runsLower); word != "" {
				hits = append(hits, fmt.Sprintf("%s: %s (%s)", where, strings.TrimSpace(line), word))
			}
		}
		return nil
	})
	return hits, err
}

// kindIn returns the first spelling of kind (or of its plural) in line that is a word of
// its own or a word of an identifier, whatever its case: it starts the line, follows
// something other than a letter or a digit, or starts a camel-case word (AKeyval,
// newKeyval); and it ends the line, or what follows is no lower-case letter (Keyvals,
// KeyvalSpec, keyval-operator, but not Attach or Latest). With runsLower, the lower-case
// kind alone is no name of the source.
func kindIn(line, kind, plural string, runsLower bool) string {
	lower := strings.ToLower(line)
	for _, form := range []string{strings.ToLower(plural), strings.ToLower(kind)} {
		for i := 0; i < len(lower); {
			j := strings.Index(lower[i:], form)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(form)
			i = start + 1
			wordStart := start == 0 || !isLetterOrDigit(line[start-1]) ||
				isUpperCase(line[start]) && (isLowerCase(line[start-1]) || isLowerCase(at(line, start+1)))
			allCaps := line[start:end] == strings.ToUpper(form)
			wordEnd := end == len(line) || !isLowerCase(line[end]) || allCaps && !isLetterOrDigit(line[end])
			if wordStart && wordEnd && !(runsLower && line[start:end] == strings.ToLower(kind) && !isLetterOrDigit(at(line, end))) {
				return line[start:end]
			}
		}
	}
	return ""
}

// at is the byte of s at i, or 0 past its end.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isLowerCase(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpperCase(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLetterOrDigit(c byte) bool {
	return isLowerCase(c) || isUpperCase(c) || c >= '0' && c <= '9'
}

// The kind is found in every spelling of a name, and not inside another word.
func TestKindIsFoundAsAWordInAnySpelling(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		runsLower  bool
		want       string
	}{
		{"a type", "type KeyvalSpec struct {", false, "Keyval"},
		{"a plural resource", "resources=keyvals,verbs=get", false, "keyvals"},
		{"a compound name", "name: keyval-operator", false, "keyval"},
		{"capitals", "KEYVAL_IMAGE=x", false, "KEYVAL"},
		{"the second word of an identifier", "func TestDeletingAKeyval(t *testing.T)", false, "Keyval"},
		{"a lower camel-case identifier", "podSet := handler.New()", false, "podSet"},
		{"another word that holds it", "the keyvalue store", false, ""},
		{"the workload it runs", "image: memcached:1.4.36-alpine", true, ""},
		{"the kind beside the workload it runs", "a Memcached runs memcached", true, "Memcached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, plural := "Keyval", "keyvals"
			if strings.Contains(tc.line, "odSet") {
				kind, plural = "PodSet", "podsets"
			} else if strings.Contains(strings.ToLower(tc.line), "memcached") {
				kind, plural = "Memcached", "memcacheds"
			}
			if got := kindIn(tc.line, kind, plural, tc.runsLower); got != tc.want {
				t.Errorf("kindIn(%q) = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
}
