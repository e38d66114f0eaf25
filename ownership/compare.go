package ownership

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxDiffs bounds how many differences a diff lists; the first few are what a reader needs.
const maxDiffs = 8

// drift compares the fields that desired sets with live and lists where live differs, as
// "path: live → desired" lines. A field desired leaves at its zero value is not compared:
// it is either unset, so the API server may default it, or zero on purpose, which only a
// pointer can say. Maps compare the keys desired has. A list of structs matches when each
// desired element matches a live element, in order, so that elements others add (an
// injected sidecar, another owner reference) are not drift; a list of scalars must be equal.
// The top-level status is never compared.
func drift(desired, live any) []string {
	var d differ
	d.value("", reflect.ValueOf(desired), reflect.ValueOf(live), true)
	return d.diffs
}

type differ struct {
	diffs []string
	found int // differences found, including those beyond maxDiffs
	// counting is set while probing list elements, where a mismatch is an answer, not a diff.
	counting int
	mismatch bool
}

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
)

func (d *differ) report(path string, live, want reflect.Value) {
	if d.counting > 0 {
		d.mismatch = true
		return
	}
	d.found++
	if len(d.diffs) < maxDiffs {
		d.diffs = append(d.diffs, fmt.Sprintf("%s: %s → %s", path, show(live), show(want)))
	}
}

func show(v reflect.Value) string {
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return "<unset>"
	}
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	case reflect.Struct, reflect.Map, reflect.Slice:
		if v.Type() == quantityType {
			q := v.Interface().(resource.Quantity)
			return q.String()
		}
		return fmt.Sprintf("%v", v.Interface())
	}
	return fmt.Sprint(v.Interface())
}

func (d *differ) value(path string, want, live reflect.Value, top bool) {
	switch want.Kind() {
	case reflect.Pointer, reflect.Interface:
		if want.IsNil() {
			return
		}
		if live.IsNil() {
			d.report(path, live, want)
			return
		}
		d.value(path, want.Elem(), live.Elem(), top)
	case reflect.Struct:
		d.structure(path, want, live, top)
	case reflect.Map:
		for _, k := range want.MapKeys() {
			lv := live.MapIndex(k)
			p := fmt.Sprintf("%s[%v]", path, k.Interface())
			if !lv.IsValid() {
				d.report(p, lv, want.MapIndex(k))
				continue
			}
			d.value(p, want.MapIndex(k), lv, false)
		}
	case reflect.Slice, reflect.Array:
		d.list(path, want, live)
	default:
		if !want.Equal(live) {
			d.report(path, live, want)
		}
	}
}

func (d *differ) structure(path string, want, live reflect.Value, top bool) {
	switch want.Type() {
	case quantityType:
		w, l := want.Interface().(resource.Quantity), live.Interface().(resource.Quantity)
		if w.Cmp(l) != 0 {
			d.report(path, live, want)
		}
		return
	case timeType:
		if !want.Interface().(metav1.Time).Time.Equal(live.Interface().(metav1.Time).Time) {
			d.report(path, live, want)
		}
		return
	}
	t := want.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || want.Field(i).IsZero() || (top && f.Name == "Status") {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p := path
		switch {
		case name == "":
			// inlined: no path element
		case p == "":
			p = name
		default:
			p += "." + name
		}
		d.value(p, want.Field(i), live.Field(i), false)
	}
}

func (d *differ) list(path string, want, live reflect.Value) {
	elem := want.Type().Elem()
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if elem.Kind() != reflect.Struct || elem == quantityType {
		if want.Len() != live.Len() {
			d.report(path, live, want)
			return
		}
		for i := range want.Len() {
			d.value(fmt.Sprintf("%s[%d]", path, i), want.Index(i), live.Index(i), false)
		}
		return
	}
	// Each desired element must match a live element at or after the previous match.
	next := 0
	for i := range want.Len() {
		found := false
		for j := next; j < live.Len(); j++ {
			if d.matches(want.Index(i), live.Index(j)) {
				next, found = j+1, true
				break
			}
		}
		if found {
			continue
		}
		// Show the field-level differences against the element at the same position, which
		// is the one a reader expects; fall back to the whole element when there is none.
		p, before := fmt.Sprintf("%s[%d]", path, i), d.found
		if i < live.Len() {
			d.value(p, want.Index(i), live.Index(i), false)
		}
		if d.found == before {
			d.report(p, reflect.Value{}, want.Index(i))
		}
	}
}

func (d *differ) matches(want, live reflect.Value) bool {
	d.counting++
	saved := d.mismatch
	d.mismatch = false
	d.value("", want, live, false)
	ok := !d.mismatch
	d.mismatch = saved
	d.counting--
	return ok
}

// stray is an element of a live list that Ensure removes before it applies desired.
type stray struct {
	path string // a JSON pointer into the live object
}

// strays finds, in the lists where a desired element has no live element with its merge key,
// the live elements whose key desired does not have. Someone changed the key of the
// operator's element (a container's port number, say): the element is now theirs, so
// server-side apply would add the operator's element beside it instead of replacing it, and
// cannot remove it. Lists are found by their elements' patchMergeKey, as the built-in types
// declare it. The pointers come in an order that keeps them valid while they are removed.
func strays(desired, live any) []stray {
	var found []stray
	var walk func(path string, want, have reflect.Value)
	walk = func(path string, want, have reflect.Value) {
		for want.Kind() == reflect.Pointer {
			if want.IsNil() || have.IsNil() {
				return
			}
			want, have = want.Elem(), have.Elem()
		}
		if want.Kind() != reflect.Struct || want.Type() == quantityType || want.Type() == timeType {
			return
		}
		t := want.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || want.Field(i).IsZero() || name == "status" {
				continue
			}
			p := path
			if name != "" {
				p += "/" + name
			}
			key := f.Tag.Get("patchMergeKey")
			w, h := want.Field(i), have.Field(i)
			if f.Type.Kind() != reflect.Slice || key == "" || f.Type.Elem().Kind() != reflect.Struct {
				walk(p, w, h)
				continue
			}
			wanted := map[any]bool{}
			lost := false
			for j := range w.Len() {
				k := mergeKey(w.Index(j), key)
				wanted[k] = true
				if l := find(h, key, k); l >= 0 {
					walk(fmt.Sprintf("%s/%d", p, l), w.Index(j), h.Index(l))
				} else {
					lost = true
				}
			}
			for l := h.Len() - 1; lost && l >= 0; l-- {
				if !wanted[mergeKey(h.Index(l), key)] {
					found = append(found, stray{path: fmt.Sprintf("%s/%d", p, l)})
				}
			}
		}
	}
	walk("", reflect.ValueOf(desired), reflect.ValueOf(live))
	return found
}

// find returns the index of the element of list whose merge key is k, or -1.
func find(list reflect.Value, key string, k any) int {
	for i := range list.Len() {
		if mergeKey(list.Index(i), key) == k {
			return i
		}
	}
	return -1
}

// mergeKey is the value of the field of struct v whose JSON name is key.
func mergeKey(v reflect.Value, key string) any {
	t := v.Type()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name == key {
			return v.Field(i).Interface()
		}
	}
	return nil
}
