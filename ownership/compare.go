package ownership

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
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
	w := newWalker(findDrift)
	defer w.release()
	w.value(reflect.ValueOf(desired), reflect.ValueOf(live), nil, true)
	return w.diffs
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
	w := newWalker(findStrays)
	defer w.release()
	w.value(reflect.ValueOf(desired), reflect.ValueOf(live), nil, true)
	return w.strays
}

// mode is what a walk looks for. Both walks go through the same fields (those desired
// sets, outside the top-level status), so one walker serves both, and a type's fields are
// read from its tags once.
type mode int

const (
	// findDrift compares every field desired sets; lists of structs are matched in order.
	findDrift mode = iota
	// findStrays compares nothing; it follows lists with a merge key, pairing their elements
	// by key, and reports the live elements a lost key leaves behind.
	findStrays
)

// walker walks desired and live side by side. The path to where it is stays a stack of
// steps, rendered only when something is reported, so that a walk that finds nothing (the
// steady state) builds no strings.
type walker struct {
	mode mode
	path []step

	diffs []string
	found int // differences found, including those beyond maxDiffs
	// counting is set while probing list elements, where a mismatch is an answer, not a diff.
	counting int
	mismatch bool

	strays []stray
}

// walkers keeps walkers, with their path stacks, between walks: Ensure compares on every
// reconcile, and a walk that finds nothing then allocates nothing.
var walkers = sync.Pool{New: func() any { return new(walker) }}

func newWalker(m mode) *walker {
	w := walkers.Get().(*walker)
	*w = walker{mode: m, path: w.path[:0]}
	return w
}

// release returns w to the pool. What it found belongs to the caller, and the path it
// keeps is cleared so that the pool holds no part of the objects compared.
func (w *walker) release() {
	clear(w.path[:cap(w.path)])
	w.diffs, w.strays = nil, nil
	walkers.Put(w)
}

// step is one element of a path: a field's JSON name, a map key or a list index.
type step struct {
	name  string
	key   reflect.Value // a map key, when it is valid
	index int           // a list index, when name and key are unset
}

// field is what a walk needs of an exported struct field, read once per type (see fieldsOf).
type field struct {
	index int
	name  string // the JSON name; empty for an inlined struct, which adds no path element
	// key is, for a list of structs with a patchMergeKey, the index of the elements' key
	// field; -1 otherwise.
	key int
}

var (
	quantityType  = reflect.TypeFor[resource.Quantity]()
	timeType      = reflect.TypeFor[metav1.Time]()
	stringMapType = reflect.TypeFor[map[string]string]()
	resourcesType = reflect.TypeFor[corev1.ResourceList]()

	// fieldCache maps a struct type to its []field. Types are few (those of the owned
	// objects), and reading tags on every reconcile would cost more than keeping them.
	fieldCache sync.Map
)

// fieldsOf returns t's exported fields, with their JSON names and list keys.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fs = append(fs, field{index: i, name: jsonName(f), key: listKey(f)})
	}
	stored, _ := fieldCache.LoadOrStore(t, fs)
	return stored.([]field)
}

// jsonName is the name f has in JSON, the name paths use; empty for an inlined struct.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// listKey is the index, in the elements of the list of structs f, of the field that its
// patchMergeKey names; -1 when f is no such list.
func listKey(f reflect.StructField) int {
	key := f.Tag.Get("patchMergeKey")
	if key == "" || f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() != reflect.Struct {
		return -1
	}
	elem := f.Type.Elem()
	for i := range elem.NumField() {
		if jsonName(elem.Field(i)) == key {
			return i
		}
	}
	return -1
}

func (w *walker) push(s step) { w.path = append(w.path, s) }
func (w *walker) pop()        { w.path = w.path[:len(w.path)-1] }

// render writes the path as the diff shows it (spec.containers[0].image) or, for a stray,
// as a JSON pointer (/spec/containers/0).
func (w *walker) render() string {
	var b strings.Builder
	for _, s := range w.path {
		switch {
		case w.mode == findStrays && s.name != "":
			b.WriteString("/" + s.name)
		case w.mode == findStrays:
			b.WriteString("/" + strconv.Itoa(s.index))
		case s.name != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		case s.key.IsValid():
			fmt.Fprintf(&b, "[%v]", s.key.Interface())
		default:
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	return b.String()
}

func (w *walker) report(live, want reflect.Value) {
	if w.mode != findDrift {
		return
	}
	if w.counting > 0 {
		w.mismatch = true
		return
	}
	w.found++
	if len(w.diffs) < maxDiffs {
		w.diffs = append(w.diffs, fmt.Sprintf("%s: %s → %s", w.render(), show(live), show(want)))
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

// value walks want and live, values of the same type. f is the struct field they are, or
// nil; top says they are the object itself.
func (w *walker) value(want, live reflect.Value, f *field, top bool) {
	if w.counting > 0 && w.mismatch {
		return // the probed element already differs; the rest cannot change the answer
	}
	switch want.Kind() {
	case reflect.Pointer, reflect.Interface:
		if want.IsNil() {
			return
		}
		if live.IsNil() {
			w.report(live, want)
			return
		}
		w.value(want.Elem(), live.Elem(), f, top)
	case reflect.Struct:
		w.structure(want, live, top)
	case reflect.Map:
		if w.mode == findDrift {
			w.mapping(want, live)
		}
	case reflect.Slice, reflect.Array:
		switch {
		case w.mode == findDrift:
			w.list(want, live)
		case f != nil && f.key >= 0 && want.Kind() == reflect.Slice:
			w.keyedList(want, live, f.key)
		}
	default:
		if w.mode == findDrift && !want.Equal(live) {
			w.report(live, want)
		}
	}
}

func (w *walker) structure(want, live reflect.Value, top bool) {
	switch want.Type() {
	case quantityType:
		if w.mode == findDrift && quantity(want).Cmp(*quantity(live)) != 0 {
			w.report(live, want)
		}
		return
	case timeType:
		if w.mode == findDrift && !timeOf(want).Time.Equal(timeOf(live).Time) {
			w.report(live, want)
		}
		return
	}
	fields := fieldsOf(want.Type())
	for i := range fields {
		f := &fields[i]
		fw := want.Field(f.index)
		if fw.IsZero() || (top && f.name == "status") {
			continue
		}
		if f.name != "" {
			w.push(step{name: f.name})
		}
		w.value(fw, live.Field(f.index), f, false)
		if f.name != "" {
			w.pop()
		}
	}
}

// quantity returns a pointer to the Quantity in v, copying it only when v is not
// addressable (a map value): Cmp needs a pointer, and most quantities are in structs.
func quantity(v reflect.Value) *resource.Quantity {
	if v.CanAddr() {
		return v.Addr().Interface().(*resource.Quantity)
	}
	q := v.Interface().(resource.Quantity)
	return &q
}

// timeOf returns a pointer to the Time in v, like quantity.
func timeOf(v reflect.Value) *metav1.Time {
	if v.CanAddr() {
		return v.Addr().Interface().(*metav1.Time)
	}
	t := v.Interface().(metav1.Time)
	return &t
}

// mapping compares the keys want has. Labels, annotations and selectors, the maps every
// object has, and a container's resources are compared without reflection, which would
// copy each key and value to the heap.
func (w *walker) mapping(want, live reflect.Value) {
	switch want.Type() {
	case stringMapType:
		compareMap(w, want.Interface().(map[string]string), live.Interface().(map[string]string),
			func(a, b string) bool { return a == b })
		return
	case resourcesType:
		compareMap(w, want.Interface().(corev1.ResourceList), live.Interface().(corev1.ResourceList),
			func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
		return
	}
	// One key and one value, reused: the iterator's Key and Value would copy each entry.
	k := reflect.New(want.Type().Key()).Elem()
	v := reflect.New(want.Type().Elem()).Elem()
	for it := want.MapRange(); it.Next(); {
		k.SetIterKey(it)
		v.SetIterValue(it)
		w.push(step{key: k})
		if lv := live.MapIndex(k); lv.IsValid() {
			w.value(v, lv, nil, false)
		} else {
			w.report(lv, v)
		}
		w.pop()
	}
}

// compareMap is mapping without reflection, for a map whose values equal compares.
func compareMap[K comparable, V any](w *walker, want, live map[K]V, equal func(a, b V) bool) {
	for k, v := range want {
		lv, ok := live[k]
		if ok && equal(v, lv) {
			continue
		}
		w.push(step{key: reflect.ValueOf(k)})
		if ok {
			w.report(reflect.ValueOf(lv), reflect.ValueOf(v))
		} else {
			w.report(reflect.Value{}, reflect.ValueOf(v))
		}
		w.pop()
	}
}

// list compares a list for drift.
func (w *walker) list(want, live reflect.Value) {
	elem := want.Type().Elem()
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if elem.Kind() != reflect.Struct || elem == quantityType {
		if want.Len() != live.Len() {
			w.report(live, want)
			return
		}
		for i := range want.Len() {
			w.push(step{index: i})
			w.value(want.Index(i), live.Index(i), nil, false)
			w.pop()
		}
		return
	}
	// Each desired element must match a live element at or after the previous match.
	next := 0
	for i := range want.Len() {
		found := false
		for j := next; j < live.Len(); j++ {
			if w.matches(want.Index(i), live.Index(j)) {
				next, found = j+1, true
				break
			}
		}
		if found {
			continue
		}
		// Show the field-level differences against the element at the same position, which
		// is the one a reader expects; fall back to the whole element when there is none.
		w.push(step{index: i})
		before := w.found
		if i < live.Len() {
			w.value(want.Index(i), live.Index(i), nil, false)
		}
		if w.found == before {
			w.report(reflect.Value{}, want.Index(i))
		}
		w.pop()
	}
}

func (w *walker) matches(want, live reflect.Value) bool {
	w.counting++
	saved := w.mismatch
	w.mismatch = false
	w.value(want, live, nil, false)
	ok := !w.mismatch
	w.mismatch = saved
	w.counting--
	return ok
}

// keyedList pairs the elements of a list by their key field (the field with index key) and
// walks each pair. When a desired key has no live element, the live elements whose key no
// desired element has are strays, listed from the last so that removing them in order keeps
// the later pointers valid.
func (w *walker) keyedList(want, live reflect.Value, key int) {
	lost := false
	for i := range want.Len() {
		l := indexByKey(live, key, want.Index(i).Field(key))
		if l < 0 {
			lost = true
			continue
		}
		w.push(step{index: l})
		w.value(want.Index(i), live.Index(l), nil, false)
		w.pop()
	}
	for l := live.Len() - 1; lost && l >= 0; l-- {
		if indexByKey(want, key, live.Index(l).Field(key)) < 0 {
			w.push(step{index: l})
			w.strays = append(w.strays, stray{path: w.render()})
			w.pop()
		}
	}
}

// indexByKey returns the index of the first element of list whose key field equals k, or -1.
func indexByKey(list reflect.Value, key int, k reflect.Value) int {
	for i := range list.Len() {
		if list.Index(i).Field(key).Equal(k) {
			return i
		}
	}
	return -1
}
