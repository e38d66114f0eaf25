// Package fight notices when the library's writes to an object keep being undone: another
// controller, a mutating webhook or the API server's defaulting fighting over the same
// fields. ownership.Ensure watches the children it applies and the reconcile shell the
// status it writes, each with a Detector of its own; both back off from a fight instead of
// feeding it.
package fight

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The rule's numbers. A revert is a write of an intent (a desired object, or a status)
// that was written before and has not changed since: it can only be needed because someone
// changed the object back. Callers record reverts only.
const (
	// Reverts is how many reverts in a row, of the same fields, make a fight. One is drift
	// put right, two may be a person who tried twice; three, each soon after the last,
	// are a machine.
	Reverts = 3
	// NoOps is how many writes of the same intent in a row that changed nothing make a
	// fight: what the library writes is not what the server keeps (a webhook or a
	// default rewrites it), so writing again cannot help.
	NoOps = 2
	// Window is how soon after the previous write a revert must come to continue a streak;
	// a fight also ends when no revert comes within it.
	Window = 10 * time.Minute
	// FirstBackoff is how long writes are held back after a fight is first detected; each
	// further revert within the window doubles it, up to MaxBackoff.
	FirstBackoff = 10 * time.Second
	// MaxBackoff caps the back-off.
	MaxBackoff = 10 * time.Minute
	// capacity bounds the objects remembered: above it the oldest streaks are dropped,
	// which can only delay a detection.
	capacity = 10000
)

// Detector remembers, per object, the streak of writes of the same intent. It is safe for
// concurrent use. The zero value is ready.
type Detector struct {
	mu      sync.Mutex
	objects map[types.UID]*streak
}

type streak struct {
	intent   string // what was written: a hash of the desired object, or of the status
	fields   string // the fields the write fixed
	reverts  int
	noOps    int
	writes   int       // writes of this intent since the streak began
	last     time.Time // of the last write
	until    time.Time // writes are held back until then
	backoffs int       // fights detected in this streak
	report   any       // what the caller said of the fight, given back while writes are held
}

// Verdict is what a write made of the object's streak.
type Verdict struct {
	// Fighting says that the write completed a fight, or continued one.
	Fighting bool
	// NoOp says that the fight is over writes that changed nothing.
	NoOp bool
	// Writes is how many writes the streak took.
	Writes int
	// Backoff is how long writes of this intent are held back from now.
	Backoff time.Duration
}

// Hold reports how long writes of intent to the object uid are still held back, if they
// are, with the report Attach kept of the fight.
func (d *Detector) Hold(uid types.UID, intent string, now time.Time) (time.Duration, any, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.objects[uid]
	if s == nil || s.intent != intent || !now.Before(s.until) {
		return 0, nil, false
	}
	return s.until.Sub(now), s.report, true
}

// Decisive reports whether one more write of intent to the object uid, fixing fields,
// would make a fight by the count of reverts: the caller may then look, before writing,
// at who holds the fields now.
func (d *Detector) Decisive(uid types.UID, intent, fields string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.objects[uid]
	return s != nil && s.intent == intent && s.fields == fields && now.Sub(s.last) <= Window && s.reverts+2 >= Reverts
}

// Attach keeps report with the object's fight, for Hold to give back.
func (d *Detector) Attach(uid types.UID, report any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.objects[uid]; s != nil {
		s.report = report
	}
}

// Wrote records a write of intent to the object uid, fixing fields, and whether the
// object changed; it says whether that makes a fight. A write of another intent (a resize,
// a rollout, a new generation) starts a new streak: changing what is wanted is never a
// fight.
func (d *Detector) Wrote(uid types.UID, intent, fields string, changed bool, now time.Time) Verdict {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.objects == nil {
		d.objects = map[types.UID]*streak{}
	}
	s := d.objects[uid]
	if s == nil || s.intent != intent || now.Sub(s.last) > Window {
		if s == nil && len(d.objects) >= capacity {
			d.evict(now)
		}
		s = &streak{intent: intent, fields: fields}
		d.objects[uid] = s
	} else if s.fields == fields {
		s.reverts++
	} else {
		s.fields, s.reverts = fields, 0
	}
	if changed {
		s.noOps = 0
	} else {
		s.noOps++
	}
	s.writes++
	s.last = now
	v := Verdict{Writes: s.writes}
	switch {
	case s.noOps >= NoOps:
		v.Fighting, v.NoOp = true, true
	case s.reverts+1 >= Reverts:
		v.Fighting = true
	default:
		return v
	}
	v.Backoff = min(FirstBackoff<<s.backoffs, MaxBackoff)
	s.backoffs++
	s.until = now.Add(v.Backoff)
	return v
}

// Forget drops what is known of the object uid, when it is gone.
func (d *Detector) Forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.objects, uid)
}

// evict drops the streaks that have ended, or all if none has.
func (d *Detector) evict(now time.Time) {
	for uid, s := range d.objects {
		if now.Sub(s.last) > Window {
			delete(d.objects, uid)
		}
	}
	if len(d.objects) >= capacity {
		clear(d.objects)
	}
}

// Managers returns, sorted, the field managers other than self that own any of paths in
// entries (an object's managedFields). A path is dotted with list keys in brackets, as
// ownership's diffs show them: spec.template.spec.containers[web].image.
func Managers(entries []metav1.ManagedFieldsEntry, paths []string, self string) []string {
	var managers []string
	for _, e := range entries {
		if e.Manager == self || e.FieldsV1 == nil || slices.Contains(managers, e.Manager) {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		for _, p := range paths {
			if owns(fields, strings.Split(p, ".")) {
				managers = append(managers, e.Manager)
				break
			}
		}
	}
	slices.Sort(managers)
	return managers
}

// owns reports whether fields (a FieldsV1 set) holds the path segs. A list element in
// brackets matches the elements whose key mentions it, or, given by its index, any
// element (a set of fields has no order); an atomic list is owned whole.
func owns(fields map[string]any, segs []string) bool {
	if len(segs) == 0 {
		return true
	}
	name, rest, keyed := strings.Cut(segs[0], "[")
	child, ok := fields["f:"+name].(map[string]any)
	if !ok {
		return false
	}
	if !keyed {
		return owns(child, segs[1:])
	}
	key := strings.TrimSuffix(rest, "]")
	if i := strings.Index(key, "]"); i >= 0 {
		key = key[:i] // a list of lists: the first key is enough to tell
	}
	_, err := strconv.Atoi(key)
	byIndex := err == nil
	var elements int
	for k, v := range child {
		element, ok := v.(map[string]any)
		if !ok || !(strings.HasPrefix(k, "k:") || strings.HasPrefix(k, "v:") || strings.HasPrefix(k, "i:")) {
			continue
		}
		elements++
		if (byIndex || strings.Contains(k, key)) && owns(element, segs[1:]) {
			return true
		}
	}
	return elements == 0
}

// Paths returns the paths of diff lines ("path: live → desired").
func Paths(diff string) []string {
	var paths []string
	for line := range strings.Lines(diff) {
		if p, _, ok := strings.Cut(line, ": "); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

// Diff returns, as "path: live → desired" lines like ownership's, the fields desired sets
// (JSON decoded into maps) that live holds otherwise, under the path prefix. The elements
// of a list of objects that each have a type or a name, as conditions do, are matched by
// it and named by it; other lists are compared whole. A condition's lastTransitionTime is
// left out: the writer stamps it anew when it puts a condition back, as a consequence of
// the fight, not what is fought over.
func Diff(live, desired any, prefix string) []string {
	var lines []string
	diff(live, desired, prefix, &lines)
	return lines
}

func diff(live, desired any, path string, lines *[]string) {
	switch d := desired.(type) {
	case map[string]any:
		l, _ := live.(map[string]any)
		keys := slices.Sorted(maps.Keys(d))
		for _, k := range keys {
			if k == "lastTransitionTime" {
				continue
			}
			diff(l[k], d[k], path+"."+k, lines)
		}
		return
	case []any:
		if key := elementKey(d); key != "" {
			l, _ := live.([]any)
			for _, e := range d {
				name := e.(map[string]any)[key]
				var match any
				for _, le := range l {
					if m, ok := le.(map[string]any); ok && m[key] == name {
						match = m
					}
				}
				diff(match, e, fmt.Sprintf("%s[%v]", path, name), lines)
			}
			return
		}
	}
	if !reflect.DeepEqual(live, desired) {
		*lines = append(*lines, fmt.Sprintf("%s: %s → %s", path, show(live), show(desired)))
	}
}

// elementKey returns the field, type or name, that every element of list has, if any.
func elementKey(list []any) string {
	for _, key := range []string{"type", "name"} {
		all := len(list) > 0
		for _, e := range list {
			m, ok := e.(map[string]any)
			if _, has := m[key]; !ok || !has {
				all = false
				break
			}
		}
		if all {
			return key
		}
	}
	return ""
}

func show(v any) string {
	if v == nil {
		return "(unset)"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}
