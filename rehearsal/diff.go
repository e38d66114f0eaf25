package rehearsal

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// A Change is one field a write changed, in words: "spec.size added",
// "spec.template.spec.containers[memcached].command changed",
// "pod template annotation example.com/restartedAt added".
type Change string

// ignored are the fields every write changes, or that the API server alone sets: no
// reviewer learns anything from them. Nor from ownership.IntentAnnotation, a hash of
// what the operator applies, which changes with whatever else the write changes.
var ignored = [][]string{
	{"apiVersion"}, {"kind"},
	{"metadata", "resourceVersion"}, {"metadata", "managedFields"}, {"metadata", "generation"},
	{"metadata", "uid"}, {"metadata", "creationTimestamp"},
}

// revisionAnnotation is the Deployment controller's count of a Deployment's rollouts: it
// may move between the read before a write and the write's answer, by no doing of the
// build's.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// diff returns what a write changed from before to after, JSON objects decoded into maps,
// sorted. status says which part to compare: a write of the status subresource can change
// only status, and any other write anything but status (which the cluster's controllers
// change meanwhile, between the read before the write and its answer).
func diff(before, after map[string]any, status bool) []Change {
	before, after = trim(before, status), trim(after, status)
	var out []Change
	walk(nil, before, after, &out)
	slices.Sort(out)
	return out
}

// trim returns a copy of obj without the ignored fields, and with status alone or without
// it.
func trim(obj map[string]any, status bool) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if (k == "status") == status {
			out[k] = v
		}
	}
	if meta, ok := out["metadata"].(map[string]any); ok {
		meta = copyMap(meta)
		out["metadata"] = meta
		if a, ok := meta["annotations"].(map[string]any); ok {
			a = copyMap(a)
			meta["annotations"] = a
			delete(a, ownership.IntentAnnotation)
			delete(a, revisionAnnotation)
			if len(a) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	for _, path := range ignored {
		m := out
		for _, k := range path[:len(path)-1] {
			m, _ = m[k].(map[string]any)
		}
		if m != nil {
			delete(m, path[len(path)-1])
		}
	}
	return out
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// walk adds to out the changes from a to b under path.
func walk(path []string, a, b any, out *[]Change) {
	if reflect.DeepEqual(a, b) {
		return
	}
	// Annotations and labels are told key by key, even when the whole map comes or goes.
	if n := len(path); n > 0 && (path[n-1] == "annotations" || path[n-1] == "labels") {
		if _, ok := b.(map[string]any); ok && a == nil {
			a = map[string]any{}
		}
		if _, ok := a.(map[string]any); ok && b == nil {
			b = map[string]any{}
		}
	}
	switch {
	case a == nil:
		*out = append(*out, describe(path, "added"))
		return
	case b == nil:
		*out = append(*out, describe(path, "removed"))
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			walk(append(slices.Clip(path), key(k)), am[k], bm[k], out)
		}
		return
	}
	// Lists of named items (containers, ports, env) are compared item by item, by name.
	an, aok := named(a)
	bn, bok := named(b)
	if aok && bok {
		last := len(path) - 1
		keys := make([]string, 0, len(an)+len(bn))
		for k := range an {
			keys = append(keys, k)
		}
		for k := range bn {
			if _, ok := an[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			item := slices.Clone(path)
			item[last] += "[" + k + "]"
			walk(item, nilIfAbsent(an, k), nilIfAbsent(bn, k), out)
		}
		return
	}
	*out = append(*out, describe(path, "changed"))
}

func nilIfAbsent(m map[string]any, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return nil
}

// named returns a list whose every item is an object with a name, by name; or whose every
// item has a type, as conditions do, by type.
func named(v any) (map[string]any, bool) {
	if m, ok := keyed(v, "name"); ok {
		return m, true
	}
	return keyed(v, "type")
}

func keyed(v any, field string) (map[string]any, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	out := make(map[string]any, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		name, ok := m[field].(string)
		if !ok || name == "" {
			return nil, false
		}
		if _, dup := out[name]; dup {
			return nil, false
		}
		out[name] = m
	}
	return out, true
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// key is a field's name as a path shows it: annotations and labels, whose keys hold dots
// and slashes, in brackets.
func key(k string) string {
	if plainKey.MatchString(k) {
		return k
	}
	return "[" + k + "]"
}

// describe words the change of the field at path: a pod template's annotations and labels
// by their keys alone, as a reviewer says them.
func describe(path []string, what string) Change {
	joined := strings.ReplaceAll(strings.Join(path, "."), ".[", "[")
	for _, m := range []struct{ prefix, words string }{
		{"spec.template.metadata.annotations[", "pod template annotation "},
		{"spec.template.metadata.labels[", "pod template label "},
		{"spec.template.metadata.annotations.", "pod template annotation "},
		{"spec.template.metadata.labels.", "pod template label "},
	} {
		if rest, ok := strings.CutPrefix(joined, m.prefix); ok {
			return Change(fmt.Sprintf("%s%s %s", m.words, strings.TrimSuffix(rest, "]"), what))
		}
	}
	return Change(joined + " " + what)
}
