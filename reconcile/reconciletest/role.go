package reconciletest

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reconcilekit/reconcilekit/internal/rbac"
)

// grant names what one RBAC rule is about: a resource of an API group ("" for the core
// group), with its subresource, as markers and rules name it ("memcacheds/status").
type grant struct{ group, resource string }

func (g grant) String() string {
	if g.group == "" {
		return g.resource
	}
	return g.resource + "." + g.group
}

// usage records the verbs the operator's managers used, by resource, across the Envs of an
// Operator: what its role must grant, and all it should.
type usage struct {
	mu    sync.Mutex
	verbs map[grant]map[string]bool
}

// record is a hook (Intercept) that records the verb of a request to a resource.
func (u *usage) record(r *Request) (*http.Response, error) {
	if r.Resource != "" {
		group := ""
		if parts := strings.Split(strings.Trim(r.HTTP.URL.Path, "/"), "/"); len(parts) > 1 && parts[0] == "apis" {
			group = parts[1]
		}
		u.mu.Lock()
		if u.verbs == nil {
			u.verbs = map[grant]map[string]bool{}
		}
		g := grant{group, r.resource()}
		if u.verbs[g] == nil {
			u.verbs[g] = map[string]bool{}
		}
		u.verbs[g][r.Verb] = true
		u.mu.Unlock()
	}
	return r.Send()
}

// needed returns the verbs the operator needs, by resource: those its managers used in the
// tests, list with watch (a cache's informer starts with a list or with a streaming watch,
// and lists again after an error), and those its
// declarations imply that tests seldom reach: update of the finalizers of a kind that owns
// children (for blockOwnerDeletion where the OwnerReferencesPermissionEnforcement
// admission plugin is on), and create and patch of events (a repeated event is a patch
// of its series). It also returns the verbs the role may grant though the tests did not
// use them: get of the kinds the operator reconciles and owns (read uncached when a cache
// is stale, or an owner read fresh after a child's deletion), and patch of a kind it
// creates as a child (ownership.Ensure reverts a child's drift with a patch).
func (o *Operator) needed() (needed, tolerated map[grant]map[string]bool) {
	o.usage.mu.Lock()
	needed = make(map[grant]map[string]bool, len(o.usage.verbs))
	for g, verbs := range o.usage.verbs {
		needed[g] = maps.Clone(verbs)
		if verbs["watch"] { // an informer's, which may start with a list or a streaming watch
			needed[g]["list"] = true
		}
	}
	o.usage.mu.Unlock()
	tolerated = map[grant]map[string]bool{}
	add := func(to map[grant]map[string]bool, g grant, verbs ...string) {
		if to[g] == nil {
			to[g] = map[string]bool{}
		}
		for _, v := range verbs {
			to[g][v] = true
		}
	}
	r := &refusals{operator: o}
	for _, d := range o.Controllers {
		group, resource, ok := r.resourceOf(d.Object())
		if !ok {
			continue
		}
		add(needed, grant{group, resource}, "list", "watch")
		add(tolerated, grant{group, resource}, "get")
		if len(d.Children()) > 0 {
			add(needed, grant{group, resource + "/finalizers"}, "update")
		}
		for _, child := range d.Children() {
			if g, res, ok := r.resourceOf(child); ok {
				add(needed, grant{g, res}, "list", "watch")
				add(tolerated, grant{g, res}, "get")
				if needed[grant{g, res}]["create"] {
					add(tolerated, grant{g, res}, "patch")
				}
			}
		}
	}
	add(needed, grant{"events.k8s.io", "events"}, "create", "patch")
	for _, u := range o.Unchecked {
		for g := range needed {
			if g.String() == u {
				delete(needed, g)
			}
		}
	}
	return needed, tolerated
}

// granted returns the verbs the operator's role grants, by resource. Rules narrowed to
// names or to a namespace, of non-resource URLs, or of wildcards are left out: a role
// check does not judge them.
func (o *Operator) granted() map[grant]map[string]bool {
	granted := map[grant]map[string]bool{}
	for _, rule := range o.rules {
		if len(rule.ResourceNames) > 0 || len(rule.NonResourceURLs) > 0 {
			continue
		}
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				if group == "*" || resource == "*" {
					continue
				}
				g := grant{group, resource}
				if slices.Contains(o.Unchecked, g.String()) {
					continue
				}
				if granted[g] == nil {
					granted[g] = map[string]bool{}
				}
				for _, v := range rule.Verbs {
					granted[g][v] = true
				}
			}
		}
	}
	return granted
}

// marker is one +kubebuilder:rbac marker line of the operator's sources.
type marker struct {
	at     string // file:line
	text   string
	grants []grant
	narrow bool // names objects or a namespace: not judged
}

// markers returns the RBAC markers of the Go sources under root, testdata left out.
func markers(root string) ([]marker, error) {
	var out []marker
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		scanner := bufio.NewScanner(f)
		for n := 1; scanner.Scan(); n++ {
			text := strings.TrimSpace(scanner.Text())
			body, ok := strings.CutPrefix(text, "// +kubebuilder:rbac:")
			if !ok {
				continue
			}
			m := marker{at: fmt.Sprintf("%s:%d", path, n), text: text}
			var groups, resources []string
			for _, arg := range strings.Split(body, ",") {
				key, value, _ := strings.Cut(arg, "=")
				switch key {
				case "groups":
					groups = strings.Split(value, ";")
				case "resources":
					resources = strings.Split(value, ";")
				case "resourceNames", "namespace", "urls":
					m.narrow = true
				}
			}
			for _, g := range groups {
				for _, r := range resources {
					m.grants = append(m.grants, grant{strings.Trim(g, `"`), r})
				}
			}
			out = append(out, m)
		}
		return scanner.Err()
	})
	return out, err
}

// CheckRole compares the role the operator's RBAC markers generate (Role) with what its
// managers used in the tests run so far and what its declarations imply (see Main), and
// returns an error naming the exact marker lines to remove and to add when they differ:
// a verb the operator needs that the role lacks, or one the role grants that the operator
// never used and its declarations do not imply. It reads the markers from the Go sources
// of the project the role belongs to (the directory above config/).
func (o *Operator) CheckRole() error {
	needed, tolerated := o.needed()
	granted := o.granted()
	changed := map[grant]bool{}
	for g, verbs := range needed {
		for v := range verbs {
			if !granted[g][v] {
				changed[g] = true
			}
		}
	}
	for g, verbs := range granted {
		for v := range verbs {
			if !needed[g][v] && !tolerated[g][v] {
				changed[g] = true
			}
		}
	}
	if len(changed) == 0 {
		return nil
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(o.Role))) // <root>/config/rbac/role.yaml
	all, err := markers(root)
	if err != nil {
		return fmt.Errorf("reconciletest: reading the RBAC markers under %s: %w", root, err)
	}
	var remove []string
	add := map[grant]bool{}
	covered := map[grant]bool{}
	for _, m := range all {
		if m.narrow {
			continue
		}
		touched := false
		for _, g := range m.grants {
			covered[g] = true
			touched = touched || changed[g]
		}
		if !touched {
			continue
		}
		remove = append(remove, m.at+": "+m.text)
		for _, g := range m.grants {
			add[g] = true
		}
	}
	for g := range changed {
		if !covered[g] {
			add[g] = true
		}
	}
	var lines []string
	for _, g := range slices.SortedFunc(maps.Keys(add), func(a, b grant) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.resource, b.resource))
	}) {
		verbs := slices.Collect(maps.Keys(needed[g]))
		for v := range tolerated[g] {
			if granted[g][v] && !needed[g][v] {
				verbs = append(verbs, v) // granted, and may stay
			}
		}
		if len(verbs) > 0 {
			lines = append(lines, rbac.Marker(g.group, g.resource, verbs))
		}
	}
	var why []string
	for _, g := range slices.SortedFunc(maps.Keys(changed), func(a, b grant) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.resource, b.resource))
	}) {
		var lacks, unused []string
		for v := range needed[g] {
			if !granted[g][v] {
				lacks = append(lacks, v)
			}
		}
		for v := range granted[g] {
			if !needed[g][v] && !tolerated[g][v] {
				unused = append(unused, v)
			}
		}
		if len(lacks) > 0 {
			why = append(why, fmt.Sprintf("it lacks %s on %s", strings.Join(rbac.Sorted(lacks...), ", "), g))
		}
		if len(unused) > 0 {
			why = append(why, fmt.Sprintf("it grants %s on %s, which the operator never used in these tests nor needs by its declaration", strings.Join(rbac.Sorted(unused...), ", "), g))
		}
	}
	msg := fmt.Sprintf("reconciletest: the role of %s (%s) is not what the operator does: %s.\n", o.User, o.Role, strings.Join(why, "; "))
	if len(remove) > 0 {
		msg += "Remove these markers:\n\t" + strings.Join(remove, "\n\t") + "\n"
	}
	if len(lines) > 0 {
		msg += "Add these markers among the controller's RBAC markers:\n\t" + strings.Join(lines, "\n\t") + "\n"
	}
	return fmt.Errorf("%sthen regenerate config/rbac/role.yaml (make generate)", msg)
}

// any reports whether a manager made any request.
func (u *usage) any() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.verbs) > 0
}

// wholeRun reports whether the test binary runs every test: a role check judges what
// every test did, not a chosen few.
func wholeRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}
