package rehearsal

import (
	"fmt"
	"slices"
	"strings"
)

// Verbs of a Write, as the report words them.
const (
	Creates = "creates"
	Deletes = "deletes"
	// Restarts is a write that changes the pod template of a Deployment, StatefulSet or
	// DaemonSet: each of its pods is replaced.
	Restarts = "restarts"
	// Rewrites is any other write of an object.
	Rewrites = "rewrites"
	// UpdatesStatus is a write of an object's status subresource.
	UpdatesStatus = "updates the status of"
)

// Write is one write a build made that the API server accepted, to one object.
type Write struct {
	// Verb is one of Creates, Deletes, Restarts, Rewrites, UpdatesStatus.
	Verb string
	// Kind, Namespace and Name name the object; Namespace is empty for a cluster-scoped one.
	Kind, Namespace, Name string
	// Changes are the fields the write changed, sorted; none for a create, a delete, or a
	// write that changed nothing.
	Changes []Change
}

// Object names the written object as "namespace/name", or "name" when cluster-scoped.
func (w Write) Object() string {
	if w.Namespace == "" {
		return w.Name
	}
	return w.Namespace + "/" + w.Name
}

func asStrings(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

// Report is what a rehearsal found: the writes of the old build restarted (the control,
// which a build that has converged makes none of) and those of the new build taking over.
type Report struct {
	// Control are the writes of the old build, restarted once it had converged.
	Control []Write
	// Upgrade are the writes of the new build, started in its place.
	Upgrade []Write
}

// summary is what a build did to one object, of one kind of write: every write of that
// kind to the object, their changes together.
type summary struct {
	verb, kind, object string
	changes            []Change
}

func (s summary) what() string {
	what := s.verb + " " + s.kind
	if len(s.changes) > 0 {
		what += ": " + strings.Join(asStrings(s.changes), ", ")
	}
	return what
}

// summarize folds the writes of each object: its creates, its deletes, its status writes,
// and its other writes (which restart a workload if any of them does), each with the
// changes of all its writes. A write that changed nothing counts only for an object that
// no other write of the same kind changed, so that a reconcile that wrote again what it
// had just written, from a cache that had not caught up, does not count.
func summarize(ws []Write) []summary {
	type key struct{ kind, object, class string }
	var order []key
	byKey := map[key]*summary{}
	for _, w := range ws {
		class := w.Verb
		if class == Restarts {
			class = Rewrites
		}
		k := key{w.Kind, w.Object(), class}
		s, ok := byKey[k]
		if !ok {
			s = &summary{verb: w.Verb, kind: w.Kind, object: w.Object()}
			byKey[k] = s
			order = append(order, k)
		}
		if w.Verb == Restarts {
			s.verb = Restarts
		}
		for _, c := range w.Changes {
			if !slices.Contains(s.changes, c) {
				s.changes = append(s.changes, c)
			}
		}
	}
	out := make([]summary, 0, len(order))
	for _, k := range order {
		s := *byKey[k]
		slices.Sort(s.changes)
		out = append(out, s)
	}
	return out
}

// String words the report for a reviewer: what the control wrote, and then what the
// upgrade wrote that the control did not, grouped by what was done, one line a group,
// naming the objects, such as
//
//	the old build, restarted, writes nothing
//	the new build writes:
//	  restarts 2 Deployments: spec.template.spec.containers[memcached].command changed (shop/cache, shop/sessions)
//
// What an object was done to is told once: the fields that all the writes of a kind (its
// status, or the rest) changed together, whatever their number. Report.Control and
// Report.Upgrade hold each write.
func (r Report) String() string {
	var b strings.Builder
	control, upgrade := summarize(r.Control), summarize(r.Upgrade)
	if len(control) == 0 {
		b.WriteString("the old build, restarted, writes nothing\n")
	} else {
		b.WriteString("the old build, restarted, writes:\n")
		group(&b, control)
	}
	done := map[string]bool{}
	for _, s := range control {
		done[s.object+" "+s.what()] = true
	}
	var fresh []summary
	for _, s := range upgrade {
		if !done[s.object+" "+s.what()] {
			fresh = append(fresh, s)
		}
	}
	switch {
	case len(upgrade) == 0:
		b.WriteString("the new build writes nothing\n")
	case len(fresh) == 0:
		b.WriteString("the new build writes what the old build writes, and nothing more\n")
	case len(fresh) < len(upgrade):
		b.WriteString("the new build writes what the old build writes, and:\n")
		group(&b, fresh)
	default:
		b.WriteString("the new build writes:\n")
		group(&b, fresh)
	}
	return b.String()
}

// maxNamed is how many objects a group names before it counts the rest.
const maxNamed = 3

// group writes a line for each group of objects of the same kind that were done the same.
func group(b *strings.Builder, ss []summary) {
	groups := map[string][]string{}
	first := map[string]summary{}
	var order []string
	for _, s := range ss {
		k := s.what()
		if _, ok := groups[k]; !ok {
			order = append(order, k)
			first[k] = s
		}
		groups[k] = append(groups[k], s.object)
	}
	slices.SortFunc(order, func(x, y string) int {
		if c := strings.Compare(first[x].kind, first[y].kind); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	for _, k := range order {
		names, s := groups[k], first[k]
		slices.Sort(names)
		line := fmt.Sprintf("  %s %s", s.verb, pluralKind(len(names), s.kind))
		switch {
		case len(s.changes) > 0:
			line += ": " + strings.Join(asStrings(s.changes), ", ")
		case s.verb != Creates && s.verb != Deletes:
			line += " without a change"
		}
		shown := names[:min(len(names), maxNamed)]
		line += " (" + strings.Join(shown, ", ")
		if rest := len(names) - len(shown); rest > 0 {
			line += fmt.Sprintf(" and %d more", rest)
		}
		b.WriteString(line + ")\n")
	}
}

// pluralKind is n objects of kind, in English: "1 Deployment", "2 Ingresses", "3 Policies".
func pluralKind(n int, kind string) string {
	if n == 1 {
		return "1 " + kind
	}
	switch {
	case strings.HasSuffix(kind, "s"), strings.HasSuffix(kind, "x"), strings.HasSuffix(kind, "ch"), strings.HasSuffix(kind, "sh"):
		kind += "es"
	case strings.HasSuffix(kind, "y") && len(kind) > 1 && !strings.ContainsRune("aeiouAEIOU", rune(kind[len(kind)-2])):
		kind = kind[:len(kind)-1] + "ies"
	default:
		kind += "s"
	}
	return fmt.Sprintf("%d %s", n, kind)
}
