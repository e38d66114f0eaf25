package explore

import (
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// Mask is a field that the states of two runs may differ in without a violation: one
// the API server assigns, one that differs between two reference runs of the same
// workload (a generated password), or one an author names in Exploration.Masks.
//
// Path names the field from the object's root, its keys separated by dots
// ("data.password"); a key that holds a dot or a slash is written in brackets
// ("metadata.labels[example.com/stamp]"), and so is a list's index ("spec.ports[0].nodePort");
// "*" or "[*]" is every key of a map or every element of a list
// ("spec.template.spec.containers[*].image"). An empty Path masks the whole object.
type Mask struct {
	// Kind is the kind of the objects masked ("Secret"); "" is every kind.
	Kind string
	// Name is the name of the objects masked, or a pattern of it as path.Match reads one
	// ("shop-*"); "" is every name. An object named by generateName is named by its
	// prefix and <generated> ("backup-<generated>").
	Name string
	// Path is the field masked (see above).
	Path string
	// Why says why, in the report: the rule of the API server, "differs between
	// reference runs", the author's reason.
	Why string
}

// String says which objects and field the mask covers, and why, as the report lists it.
func (m Mask) String() string {
	kind, name := m.Kind, m.Name
	if kind == "" {
		kind = "every kind"
	}
	if name != "" {
		kind += " " + name
	}
	what := m.Path
	if what == "" {
		what = "(the whole object)"
	}
	if m.Why == "" {
		return kind + " " + what
	}
	return kind + " " + what + ": " + m.Why
}

// matches reports whether m applies to the object of kind named name.
func (m Mask) matches(kind, name string) bool {
	if m.Kind != "" && m.Kind != kind {
		return false
	}
	if m.Name == "" || m.Name == name {
		return true
	}
	ok, _ := path.Match(m.Name, name)
	return ok
}

// validate reports what is wrong with m's path, if anything.
func (m Mask) validate() error {
	if _, err := parsePath(m.Path); err != nil {
		return fmt.Errorf("explore: the mask %q: %w", m.String(), err)
	}
	return nil
}

// Why the API server's masks are.
const (
	whyServer  = "assigned by the API server"
	whyLearned = "differs between reference runs"
)

// ruleMasks are the fields the cluster assigns that Masked does not cover by code: the
// controller-uid labels and selector the API server gives a Job (and its pods), which
// hold the Job's own UID; and the counts of a workload's template changes, a Deployment's
// revision (its controller's, on a simulated cluster) and a DaemonSet's template
// generation, which differ between a child updated and one made from scratch for the
// same spec, and with the updates a perturbed run made on its way.
var ruleMasks = func() []Mask {
	var ms []Mask
	for _, label := range []string{"batch.kubernetes.io/controller-uid", "controller-uid"} {
		for _, at := range []string{"metadata.labels", "spec.selector.matchLabels", "spec.template.metadata.labels"} {
			ms = append(ms, Mask{Path: at + "[" + label + "]", Why: whyServer})
		}
	}
	ms = append(ms,
		Mask{Kind: "Deployment", Path: "metadata.annotations[deployment.kubernetes.io/revision]", Why: whyServer},
		Mask{Kind: "DaemonSet", Path: "metadata.annotations[deprecated.daemonset.template.generation]", Why: whyServer})
	return ms
}()

// parsePath splits a Mask's path into its keys; "*" is every key or element.
func parsePath(p string) ([]string, error) {
	var keys []string
	for i := 0; i < len(p); {
		switch p[i] {
		case '.':
			if i == 0 || i == len(p)-1 {
				return nil, fmt.Errorf("a path may not begin or end with a dot")
			}
			i++
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("an unclosed [ at %d", i)
			}
			key := strings.Trim(p[i+1:i+end], `"`)
			if key == "" {
				return nil, fmt.Errorf("an empty [] at %d", i)
			}
			keys = append(keys, key)
			i += end + 1
		default:
			end := strings.IndexAny(p[i:], ".[")
			if end < 0 {
				end = len(p) - i
			}
			keys = append(keys, p[i:i+end])
			i += end
		}
	}
	return keys, nil
}

// formatPath writes keys as a Mask's path: a key with a dot, a slash or a bracket, or a
// list's index, in brackets.
func formatPath(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		if _, err := strconv.Atoi(k); err == nil || strings.ContainsAny(k, "./[]") {
			b.WriteString("[" + k + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	return b.String()
}

// mask applies masks to s, in place: an object a mask with no path names is left out;
// a map's key a mask names is removed, so that a field that one run sets and another
// does not is masked too; a list's element is replaced by "<masked>".
func mask(s state, masks []Mask) {
	for _, key := range mapsKeys(s) {
		kind, name, _ := strings.Cut(key, " ")
		for _, m := range masks {
			if !m.matches(kind, name) {
				continue
			}
			keys, err := parsePath(m.Path)
			if err != nil {
				continue // validated when the exploration began
			}
			if len(keys) == 0 {
				delete(s, key)
				break
			}
			maskAt(s[key], keys)
		}
	}
}

func maskAt(v any, keys []string) {
	switch x := v.(type) {
	case map[string]any:
		if len(keys) == 1 {
			if keys[0] == "*" {
				clear(x)
			} else {
				delete(x, keys[0])
			}
			return
		}
		if keys[0] == "*" {
			for _, c := range x {
				maskAt(c, keys[1:])
			}
			return
		}
		maskAt(x[keys[0]], keys[1:])
	case []any:
		for i := range x {
			if keys[0] != "*" && keys[0] != strconv.Itoa(i) {
				continue
			}
			if len(keys) == 1 {
				x[i] = "<masked>"
			} else {
				maskAt(x[i], keys[1:])
			}
		}
	}
}

// leaves adds the scalar leaves of v to out, by their paths as keys (an empty map or
// list is a leaf).
func leaves(v any, keys []string, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[formatPath(keys)] = x
		}
		for k, c := range x {
			leaves(c, append(slices.Clone(keys), k), out)
		}
	case []any:
		if len(x) == 0 {
			out[formatPath(keys)] = x
		}
		for i, c := range x {
			leaves(c, append(slices.Clone(keys), strconv.Itoa(i)), out)
		}
	default:
		out[formatPath(keys)] = x
	}
}

// learnMasks compares the states of two reference runs, settled after the same steps,
// and returns a mask of each field that differs between them (by object and path), and
// of each object that one of them holds and the other does not.
func learnMasks(a, b []state) []Mask {
	seen := map[string]bool{}
	var out []Mask
	add := func(key, p string) {
		kind, name, _ := strings.Cut(key, " ")
		if prefix, _, ok := strings.Cut(name, "<generated>"); ok {
			name = prefix + "<generated>*" // any of them: they are ordered by what they hold
		}
		m := Mask{Kind: kind, Name: name, Path: p, Why: whyLearned}
		if !seen[m.String()] {
			seen[m.String()] = true
			out = append(out, m)
		}
	}
	for i := range min(len(a), len(b)) {
		for _, key := range mapsKeys(union(a[i], b[i])) {
			x, inA := a[i][key]
			y, inB := b[i][key]
			if !inA || !inB {
				add(key, "")
				continue
			}
			lx, ly := map[string]any{}, map[string]any{}
			leaves(x, nil, lx)
			leaves(y, nil, ly)
			for _, p := range mapsKeys(union(lx, ly)) {
				if !cmp.Equal(lx[p], ly[p]) {
					add(key, p)
				}
			}
		}
	}
	return out
}

func union[V any](a, b map[string]V) map[string]V {
	u := map[string]V{}
	for k, v := range a {
		u[k] = v
	}
	for k, v := range b {
		u[k] = v
	}
	return u
}

// sample keeps n of points, drawn from the exploration's seed and the class, in their
// order: a class whose points are more than its cap is explored at a seeded sample.
func sample[T any](points []T, n int, salt string) []T {
	if n <= 0 || len(points) <= n {
		return points
	}
	h := fnv.New64a()
	h.Write([]byte(salt))
	r := newRand(h.Sum64())
	keep := r.Perm(len(points))[:n]
	slices.Sort(keep)
	out := make([]T, n)
	for i, k := range keep {
		out[i] = points[k]
	}
	return out
}
