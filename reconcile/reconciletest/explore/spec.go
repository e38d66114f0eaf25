package explore

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
)

var seed = flag.Uint64("explore.seed", 1, "the seed of the random values of spec transitions; a replay needs the seed of the run it replays")

// maxInvalidReconciles bounds the reconciles an operator may make while an invalid spec
// stands: the one its change asks for, and a few that the events of its own status write
// and of its children may bring. An operator that retries the invalid spec makes more
// before its backoff is long enough for it to look settled.
const maxInvalidReconciles = 5

// transition is a change of the spec of one of the workload's objects of the operator's
// kinds, generated from its CRD's schema.
type transition struct {
	// object is the "Kind name" of the object; step the index of the workload step that
	// creates it.
	object string
	step   int
	// path is the field changed, below spec; value its new value, unless remove.
	path   []string
	value  any
	remove bool
	// past says the API server would refuse the change: it is written to etcd behind the
	// API server's back (reconciletest.ControlPlane.RewriteStored).
	past bool
	// invalid says the spec the operator reads is one the schema refuses: the operator
	// must end Stalled, with a reason, in a bounded number of reconciles. A removal the
	// operator's Go type reads as the field's zero value is invalid only if that value is.
	invalid bool
	// seen is the value the operator reads for a removed field, if its Go type reads one.
	seen any
	// label names the transition where its value would not read well in a point's name:
	// "config+explore=explore-xkcdq" for a key added to a map.
	label string
}

// name is the transition's part of its point's name: "size=101", "-suspend",
// "storage.whenDeleted=Invalid".
func (tr transition) name() string {
	p := strings.Join(tr.path, ".")
	if tr.remove {
		return "-" + p
	}
	if tr.label != "" {
		return tr.label
	}
	return fmt.Sprintf("%s=%v", p, tr.value)
}

// describe says what the transition does, for a report.
func (tr transition) describe() string {
	how := "updated"
	if tr.past {
		how = "written past the schema (RewriteStored)"
	}
	what := fmt.Sprintf("spec.%s = %v", strings.Join(tr.path, "."), tr.value)
	if tr.remove {
		what = "spec." + strings.Join(tr.path, ".") + " removed"
		if tr.seen != nil {
			what += fmt.Sprintf(" (read as %v)", tr.seen)
		}
	}
	validity := "valid"
	if tr.invalid {
		validity = "invalid"
	}
	return fmt.Sprintf("%s: %s, %s; %s", tr.object, what, how, validity)
}

// node is the part of an openAPIV3Schema that transitions are generated from.
type node struct {
	Type        string          `json:"type"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	Enum        []any           `json:"enum"`
	Properties  map[string]node `json:"properties"`
	Required    []string        `json:"required"`
	IntOrString bool            `json:"x-kubernetes-int-or-string"`
	// A free string is one with none of these.
	Pattern   string `json:"pattern"`
	Format    string `json:"format"`
	MaxLength *int64 `json:"maxLength"`
	MinLength *int64 `json:"minLength"`
	// Items is a list's elements' schema; AdditionalProperties a map's values' (a
	// schema, or true).
	Items                *node           `json:"items"`
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
	MaxItems             *int64          `json:"maxItems"`
	MaxProperties        *int64          `json:"maxProperties"`
	Validations          []any           `json:"x-kubernetes-validations"`
}

// free reports whether n is a string the schema constrains no further than its type: a
// new value of it is one the API server takes.
func (n node) free() bool {
	return n.Type == "string" && len(n.Enum) == 0 && n.Pattern == "" && n.Format == "" &&
		len(n.Validations) == 0 && (n.MaxLength == nil || *n.MaxLength >= 12) && (n.MinLength == nil || *n.MinLength <= 12)
}

// values is the schema of a map's values, if n is a map (an object with no properties).
func (n node) values() (node, bool) {
	if n.Type != "object" || n.Properties != nil || len(n.AdditionalProperties) == 0 {
		return node{}, false
	}
	var v node
	if json.Unmarshal(n.AdditionalProperties, &v) != nil {
		return node{}, false
	}
	return v, true
}

// allows reports whether the schema n allows v, as far as the constraints transitions are
// generated from go: type, bounds and enum.
func (n node) allows(v any) bool {
	switch n.Type {
	case "integer", "number":
		f, ok := number(v)
		if !ok || (n.Type == "integer" && f != math.Trunc(f)) {
			return false
		}
		return (n.Minimum == nil || f >= *n.Minimum) && (n.Maximum == nil || f <= *n.Maximum)
	case "string":
		if _, ok := v.(string); !ok {
			return false
		}
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return len(n.Enum) == 0 || slices.ContainsFunc(n.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) })
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// specSchema reads the schema of gvk's spec from its CRD on the API server.
func (ex *explorer) specSchema(ctx context.Context, c client.Client, gvk schema.GroupVersionKind) (node, error) {
	m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return node{}, err
	}
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := c.Get(ctx, client.ObjectKey{Name: m.Resource.Resource + "." + gvk.Group}, crd); err != nil {
		return node{}, fmt.Errorf("reading the CRD of %s: %w", gvk.Kind, err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if vm["name"] != gvk.Version {
			continue
		}
		spec, ok, _ := unstructured.NestedFieldNoCopy(vm, "schema", "openAPIV3Schema", "properties", "spec")
		if !ok {
			return node{}, errors.New("the CRD of " + gvk.Kind + " has no schema of spec")
		}
		raw, err := json.Marshal(spec)
		if err != nil {
			return node{}, err
		}
		var n node
		return n, json.Unmarshal(raw, &n)
	}
	return node{}, fmt.Errorf("the CRD of %s serves no version %s", gvk.Kind, gvk.Version)
}

// transitions generates the spec transitions of every object of the operator's kinds
// that the workload creates: for each field of the spec's schema, its bounds and a random
// value between them, every other value of an enum, the other value of a boolean, the
// removal of a field the object sets, and, written past the schema, a value just outside
// each bound and one outside an enum. Free strings, lists, maps and int-or-string fields
// get no value, only their removal. A kind that no CRD serves gets none.
func (ex *explorer) transitions() []transition {
	t := ex.t
	ctx := t.Context()
	c := ex.admin(t)
	var out []transition
	for i, s := range ex.x.Workload {
		if s.object == nil || !ex.ours[kindOf(s.object)] {
			continue
		}
		gvk, err := c.GroupVersionKindFor(s.object)
		if err != nil {
			t.Fatalf("explore: %v", err)
		}
		sch, err := ex.specSchema(ctx, c, gvk)
		if apierrors.IsNotFound(err) {
			continue // a built-in kind: its schema is not the operator's
		}
		if err != nil {
			t.Fatalf("explore: %v", err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s.object)
		if err != nil {
			t.Fatalf("explore: %v", err)
		}
		spec, _ := u["spec"].(map[string]any)
		g := generator{object: gvk.Kind + " " + s.object.GetName(), step: i, gvk: gvk, scheme: ex.x.Operator.Scheme, original: u}
		g.walk(sch, nil, spec)
		out = append(out, g.out...)
	}
	return out
}

// generator generates the transitions of one object.
type generator struct {
	object   string
	step     int
	gvk      schema.GroupVersionKind
	scheme   *runtime.Scheme
	original map[string]any
	out      []transition
}

func (g *generator) add(tr transition) {
	tr.object, tr.step = g.object, g.step
	g.out = append(g.out, tr)
}

// rand is the random source of the field at path: the exploration's seed, the object and
// the path, so that one seed always makes the same values.
func (g *generator) rand(path []string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(g.object + "/" + strings.Join(path, ".")))
	return newRand(h.Sum64())
}

// newRand is a random source of the exploration's seed (-explore.seed) and salt.
func newRand(salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(*seed, salt))
}

func (g *generator) walk(n node, path []string, value map[string]any) {
	for _, name := range mapsKeys(n.Properties) {
		p := append(slices.Clone(path), name)
		child := n.Properties[name]
		current, set := value[name]
		if set {
			g.removal(n, child, p)
		}
		switch {
		case child.IntOrString:
		case child.Type == "object" && child.Properties != nil:
			m, _ := current.(map[string]any)
			g.walk(child, p, m)
		case child.Type == "integer":
			g.integers(child, p, current, !slices.Contains(n.Required, name))
		case child.Type == "boolean":
			b, _ := current.(bool)
			g.add(transition{path: p, value: !b})
		case child.Type == "string" && len(child.Enum) > 0:
			for _, e := range child.Enum {
				if fmt.Sprint(e) != fmt.Sprint(current) {
					g.add(transition{path: p, value: e})
				}
			}
			g.add(transition{path: p, value: "Invalid", past: true, invalid: true})
		case child.free():
			g.add(transition{path: p, value: g.word(p)})
		case child.Type == "object" && len(child.Validations) == 0 && (child.MaxProperties == nil || *child.MaxProperties > int64(len(asMap(current)))):
			if v, ok := child.values(); ok && v.free() {
				// A new key, with a new value; the keys there keep theirs.
				m := runtime.DeepCopyJSON(asMap(current))
				w := g.word(p)
				m["explore"] = w
				g.add(transition{path: p, value: m, label: fmt.Sprintf("%s+explore=%s", strings.Join(p, "."), w)})
			}
		case child.Type == "array" && child.Items != nil && child.Items.free() && len(child.Validations) == 0:
			l, _ := current.([]any)
			if child.MaxItems == nil || *child.MaxItems > int64(len(l)) {
				w := g.word(p)
				g.add(transition{path: p, value: append(slices.Clone(l), w), label: fmt.Sprintf("%s+=%s", strings.Join(p, "."), w)})
			}
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// word is a new value for the free string (or map or list of them) at path: "explore-"
// and five letters of the seed's.
func (g *generator) word(path []string) string {
	r := g.rand(path)
	b := []byte("explore-")
	for range 5 {
		b = append(b, byte('a'+r.IntN(26)))
	}
	return string(b)
}

// integers adds an integer field's bounds, a random value between them and, past the
// schema, the values just outside them. A value outside them that the operator's Go type
// reads as it reads the field's absence (0, with omitempty) is not one of them if the
// field is optional: the operator cannot tell it from the field's removal, and may well
// read it as the default the schema gives an absent field.
func (g *generator) integers(n node, path []string, current any, optional bool) {
	cur, _ := number(current)
	lo, hi := 0.0, cur+10
	if n.Minimum != nil {
		lo = *n.Minimum
		if below := int64(lo) - 1; !optional || !g.readsAsAbsent(path, below) {
			g.add(transition{path: path, value: below, past: true, invalid: true})
		}
	}
	if n.Maximum != nil {
		hi = *n.Maximum
		g.add(transition{path: path, value: int64(hi) + 1, past: true, invalid: true})
	}
	seen := map[int64]bool{int64(cur): current != nil}
	for _, v := range []int64{int64(lo), int64(hi), int64(lo) + g.rand(path).Int64N(int64(hi-lo)+1)} {
		if !seen[v] {
			seen[v] = true
			g.add(transition{path: path, value: v})
		}
	}
}

// removal adds the removal of the field at path. A required field's removal is written
// past the schema; it is invalid unless the operator's Go type reads the absent field as
// a value the schema allows.
func (g *generator) removal(parent, n node, path []string) {
	tr := transition{path: path, remove: true}
	if slices.Contains(parent.Required, path[len(path)-1]) {
		tr.past, tr.invalid = true, true
		if seen, ok := g.readAs(path); ok {
			tr.seen, tr.invalid = seen, !n.allows(seen)
		}
	}
	g.add(tr)
}

// readsAsAbsent reports whether the operator's Go type reads the field at path set to
// value as it reads the field absent: it drops the value when it writes the object back.
func (g *generator) readsAsAbsent(path []string, value any) bool {
	u := runtime.DeepCopyJSON(g.original)
	if err := unstructured.SetNestedField(u, value, append([]string{"spec"}, path...)...); err != nil {
		return false
	}
	obj, err := g.scheme.New(g.gvk)
	if err != nil {
		return false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return false
	}
	back, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false
	}
	_, ok, _ := unstructured.NestedFieldNoCopy(back, append([]string{"spec"}, path...)...)
	return !ok
}

// readAs returns the value the operator's Go type reads at path once the field is removed
// from the object, if it reads one (a field with no omitempty and no pointer).
func (g *generator) readAs(path []string) (any, bool) {
	u := runtime.DeepCopyJSON(g.original)
	unstructured.RemoveNestedField(u, append([]string{"spec"}, path...)...)
	obj, err := g.scheme.New(g.gvk)
	if err != nil {
		return nil, false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return nil, false
	}
	back, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, false
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(back, append([]string{"spec"}, path...)...)
	return v, ok
}

// apply makes the transition on the object in namespace: an update through the API
// server, or, past the schema, a rewrite of what etcd stores, with the generation the API
// server would have given the change. It returns the spec the object had.
func (ex *explorer) apply(ctx context.Context, c client.Client, namespace string, tr transition) (map[string]any, error) {
	obj, err := ex.objectOf(ctx, c, namespace, tr.object)
	if err != nil {
		return nil, err
	}
	before, _, _ := unstructured.NestedMap(obj.Object, "spec")
	change := tr.change
	if !tr.past {
		return before, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			o, err := ex.objectOf(ctx, c, namespace, tr.object)
			if err != nil {
				return err
			}
			change(o.Object)
			return c.Update(ctx, o)
		})
	}
	m, err := c.RESTMapper().RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("/registry/%s/%s/%s/%s", m.Resource.Group, m.Resource.Resource, namespace, obj.GetName())
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		key = fmt.Sprintf("/registry/%s/%s/%s", m.Resource.Group, m.Resource.Resource, obj.GetName())
	}
	return before, ex.x.Operator.ControlPlane.RewriteStored(ctx, key, func(o map[string]any) {
		change(o)
		md, _ := o["metadata"].(map[string]any)
		if g, ok := number(md["generation"]); ok {
			md["generation"] = int64(g) + 1
		}
	})
}

// change makes the transition on the object o, unstructured.
func (tr transition) change(o map[string]any) {
	field := append([]string{"spec"}, tr.path...)
	if tr.remove {
		unstructured.RemoveNestedField(o, field...)
	} else {
		_ = unstructured.SetNestedField(o, runtime.DeepCopyJSONValue(jsonValue(tr.value)), field...)
	}
}

// createChanged creates obj in namespace with the transition made on it: the object a
// fresh operator converges on from scratch, for the differential oracle.
func createChanged(ctx context.Context, c client.Client, namespace string, obj client.Object, tr transition) error {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return err
	}
	o, err := inRun(c, obj, namespace)
	if err != nil {
		return err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(m)}
	tr.change(u.Object)
	u.SetGroupVersionKind(gvk)
	return c.Create(ctx, u)
}

// reached is the differential oracle (Acto's): the children of the object once the
// operator has quiesced after the transition, in got, must be those a fresh operator makes
// from scratch for an object created with the spec the transition left, in fresh, masked
// alike: which children there are (a child of the old value never deleted, one of the new
// never made) and every field of each that a client writes (a field whose removal never
// reaches a child, a changed value never passed on; the status of a child is its own
// controller's, and left out). A difference is a spec the operator did not reach from
// where it was.
//
// It judges every valid transition, whatever kstatus reads the object: an operator whose
// readiness follows a Job, a Deployment or a StatefulSet is InProgress for good on an API
// server alone, and what it made is judged all the same. What it cannot judge it says, as
// an unjudged transition with why: a run (the spec run or the one from scratch) that never
// settled; an object paused on either side (a paused object's children stay as they were,
// by contract: reconcile.Paused); and an object Stalled on either side, whose operator
// reports, for that generation, a spec it cannot reach (a ConfigMap it names that does not
// exist, a volume claim's class the API server will not change): a fresh operator's
// children for that spec are not what the operator converges to, and the status says so.
// A Pod's and a Job's spec are compared by their presence alone: the API server refuses to
// change them in place, and whether to make them again for a new spec is the operator's
// (an At's pod, run once).
func reached(tr transition, got, fresh *result) ([]Violation, *Unjudged) {
	if tr.past {
		return nil, nil // no run from scratch: the API server would refuse the object
	}
	// reason is why in short, for the summary to count alike; why names the object.
	unjudged := func(reason, why string, args ...any) ([]Violation, *Unjudged) {
		return nil, &Unjudged{Oracle: SpecNotReached, reason: reason, Why: fmt.Sprintf("after %s, ", tr.describe()) + fmt.Sprintf(why, args...)}
	}
	switch {
	case got.unsettled():
		return unjudged("never settled", "the operator never settled")
	case fresh == nil || fresh.unsettled() || fresh.outOfTime:
		return unjudged("never settled from scratch", "the fresh operator never settled on the object from scratch")
	case got.transitioned == nil || fresh.family == nil:
		return unjudged("no state read", "no state of the object was read once it settled")
	case paused(got.transitioned[tr.object]) || paused(fresh.family[tr.object]):
		return unjudged("paused", "%s is paused: its children stay as they were, by contract", tr.object)
	}
	if r := stalledReason(got.transitioned[tr.object]); r != "" {
		return unjudged("Stalled", "the operator reports %s Stalled (%s): a spec it says it cannot reach", tr.object, r)
	}
	if r := stalledReason(fresh.family[tr.object]); r != "" {
		return unjudged("Stalled from scratch", "a fresh operator reports %s from scratch Stalled (%s): no state it converges to", tr.object, r)
	}
	children := func(s state) state {
		out := state{}
		for k, v := range s {
			if k == tr.object {
				continue
			}
			if kind, _ := v["kind"].(string); kind == "Pod" || kind == "Job" {
				v = maps.Clone(v)
				delete(v, "spec")
			}
			out[k] = v
		}
		return out
	}
	if d := cmp.Diff(children(fresh.family), children(got.transitioned)); d != "" {
		return []Violation{{Oracle: SpecNotReached, Detail: fmt.Sprintf(
			"after %s, the operator settled (kstatus %s) with children of %s other than a fresh operator makes from scratch for spec.%s as the transition left it (-from scratch +after the transition):\n%s",
			tr.describe(), got.verdict, tr.object, strings.Join(tr.path, "."), d)}}, nil
	}
	return nil, nil
}

// stalledReason is the reason of the normalised obj's condition Stalled if it is True
// for the object's generation, "" otherwise.
func stalledReason(obj map[string]any) string {
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == conditions.Stalled && m["status"] == "True" {
			return fmt.Sprint(m["reason"])
		}
	}
	return ""
}

// paused reports whether the normalised obj has the condition Paused True.
func paused(obj map[string]any) bool {
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Paused" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// restore writes spec back as the object's spec: the return to a valid spec.
func (ex *explorer) restore(ctx context.Context, c client.Client, namespace, object string, spec map[string]any) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := ex.objectOf(ctx, c, namespace, object)
		if err != nil {
			return err
		}
		o.Object["spec"] = runtime.DeepCopyJSONValue(spec)
		return c.Update(ctx, o)
	})
}

// jsonValue is v as unstructured holds it.
func jsonValue(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case float64:
		if x == math.Trunc(x) {
			return int64(x)
		}
	}
	return v
}

// objectOf reads the object named "Kind name" of the operator's kinds in namespace.
func (ex *explorer) objectOf(ctx context.Context, c client.Client, namespace, object string) (*unstructured.Unstructured, error) {
	kind, name, _ := strings.Cut(object, " ")
	for _, gvk := range ex.ourKinds() {
		if gvk.Kind == kind {
			o := &unstructured.Unstructured{}
			o.SetGroupVersionKind(gvk)
			o.SetName(name)
			key, err := keyInRun(c, o, namespace)
			if err != nil {
				return nil, err
			}
			return o, c.Get(ctx, key, o)
		}
	}
	return nil, fmt.Errorf("explore: %s is of no kind the operator reconciles", object)
}

// family is the state of object and of the objects it owns, in namespace.
// steadyFamily is family once two reads childDelay apart agree, or after a few: the
// states a transition's judgement compares are the operator's settled ones, and with runs
// made at once, under load, an operator may look settled between two writes of one
// reconcile (its count of reconciles is the process's).
//
// With written, each child holds only the fields its controller wrote (written): what
// the differential oracle compares.
func (ex *explorer) steadyFamily(ctx context.Context, c client.Client, namespace, object string, written bool) (state, error) {
	last, err := ex.family(ctx, c, namespace, object, written)
	for range 5 {
		if err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return last, nil
		case <-time.After(childDelay):
		}
		var now state
		now, err = ex.family(ctx, c, namespace, object, written)
		if err == nil && cmp.Equal(last, now) {
			return now, nil
		}
		last = now
	}
	return last, err
}

func (ex *explorer) family(ctx context.Context, c client.Client, namespace, object string, written bool) (state, error) {
	objs, err := objectsOf(ctx, c, namespace, ex.kinds)
	if err != nil {
		return nil, err
	}
	o, ok := objs[object]
	if !ok {
		return state{}, nil
	}
	uid := string(o.GetUID())
	for k, x := range objs {
		if k != object && !slices.Contains(ownerUIDs(x.Object), uid) {
			delete(objs, k)
			continue
		}
		if written && k != object {
			objs[k] = writtenFields(x)
		}
	}
	return ex.normalise(objs, namespace), nil
}

// writtenFields is o without the fields that only the cluster's other controllers wrote:
// those its managedFields give to managers that did not write its ownerReferences, and to
// none that did (a Deployment's revision annotation on a simulated cluster, which differs
// between a Deployment updated and one made from scratch). What its controller wrote, the
// operator, and what the API server defaulted (no manager's) stay: which manager holds a
// defaulted field depends on how the object came to be (a create whose fields the operator
// took over holds them, an update does not), not on the spec. On an API server alone no
// other controller writes, and o is compared whole.
func writtenFields(o *unstructured.Unstructured) *unstructured.Unstructured {
	mine, others := map[string]bool{}, map[string][]string{}
	for _, mf := range o.GetManagedFields() {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var set map[string]any
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &set) != nil {
			continue
		}
		fields := map[string][]string{}
		leafPaths(set, nil, fields)
		if _, owner := fields["metadata\x00ownerReferences"]; owner {
			for k := range fields {
				mine[k] = true
			}
			continue
		}
		maps.Copy(others, fields)
	}
	out := o
	for k, path := range others {
		if !mine[k] {
			if out == o {
				out = o.DeepCopy()
			}
			unstructured.RemoveNestedField(out.Object, path...)
		}
	}
	return out
}

// leafPaths adds the paths of the fields a managedFields set names down to its leaves, a
// list being a leaf, to out by their parts joined with NUL.
func leafPaths(set map[string]any, prefix []string, out map[string][]string) {
	for k, v := range set {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue // a list's element, by key, value or index: the list is the leaf
		}
		p := append(slices.Clone(prefix), name)
		sub, _ := v.(map[string]any)
		named := false
		for sk := range sub {
			named = named || strings.HasPrefix(sk, "f:")
		}
		if named {
			leafPaths(sub, p, out)
			continue
		}
		out[strings.Join(p, "\x00")] = p
	}
}

// mapping is, for each object of the operator's kinds and each scalar field of its spec,
// the fields of the objects it owns that held the field's value in every settled state of
// the reference run: where the operator puts the field (a PodSet's spec.size in its
// Deployment's spec.replicas). A transition of the field must reach one of them. Only values
// unlikely to match by chance are learnt from: integers other than -1, 0 and 1, and
// strings of three characters or more; and only fields a client wrote (in the object's
// managedFields) outside lists, not those the API server defaulted (a probe's threshold of
// 3 is not a Keyval's 3 replicas).
type mapping map[string]map[string][]string

// learn narrows m by one settled state of the reference run, whose objects written by a
// client are written (managed).
func (m mapping) learn(s state, written map[string]map[string]bool) {
	for _, key := range mapsKeys(s) {
		obj := s[key]
		spec, ok := obj["spec"].(map[string]any)
		kind, _ := obj["kind"].(string)
		if !ok || kind == "" {
			continue
		}
		leaves := map[string]any{}
		flatten(spec, "", leaves)
		children := map[string]any{}
		for _, ck := range mapsKeys(s) {
			if ck == key || !ownedBy(s[ck], key) {
				continue
			}
			flatten(s[ck], ck+":", children)
		}
		fields := m[key]
		if fields == nil {
			fields = map[string][]string{}
			m[key] = fields
		}
		for p, v := range leaves {
			if !distinctive(v) {
				continue
			}
			var where []string
			for cp, cv := range children {
				child, field, _ := strings.Cut(cp, ":")
				if fmt.Sprint(cv) == fmt.Sprint(v) && written[child][field] {
					where = append(where, cp)
				}
			}
			slices.Sort(where)
			if prev, ok := fields[p]; ok {
				where = slices.DeleteFunc(where, func(w string) bool { return !slices.Contains(prev, w) })
			}
			fields[p] = where
		}
	}
}

// managed returns the fields of each object that a client wrote, by their dotted paths
// (from its managedFields; fields in lists are left out).
func managed(objs map[string]*unstructured.Unstructured) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for key, o := range objs {
		fields := map[string]bool{}
		for _, mf := range o.GetManagedFields() {
			if mf.FieldsV1 == nil {
				continue
			}
			var set map[string]any
			if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &set) == nil {
				fieldPaths(set, "", fields)
			}
		}
		out[key] = fields
	}
	return out
}

func fieldPaths(set map[string]any, prefix string, out map[string]bool) {
	for k, v := range set {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue // a list's element, by key, value or index
		}
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		out[p] = true
		if m, ok := v.(map[string]any); ok {
			fieldPaths(m, p, out)
		}
	}
}

// ownedBy reports whether the normalised obj names key ("Kind name") among its owners.
func ownedBy(obj map[string]any, key string) bool {
	md, _ := obj["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		rm, _ := r.(map[string]any)
		if fmt.Sprintf("%v %v", rm["kind"], rm["name"]) == key {
			return true
		}
	}
	return false
}

func distinctive(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != -1 && x != 0 && x != 1
	case string:
		return len(x) >= 3
	}
	return false
}

// flatten adds the scalar leaves of v to out by their dotted paths, prefixed.
func flatten(v any, prefix string, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := prefix + k
			if !strings.HasSuffix(prefix, ":") && prefix != "" {
				p = prefix + "." + k
			}
			flatten(c, p, out)
		}
	case []any:
		for i, c := range x {
			flatten(c, prefix+"["+strconv.Itoa(i)+"]", out)
		}
	default:
		out[strings.TrimSuffix(prefix, ".")] = x
	}
}

// invalidSpecNotStalled (InvalidSpecNotStalled, once an invalid transition has
// settled): the invalid spec leaves the object Stalled, with a reason, for the generation
// that holds it, so that kstatus reads it Failed. An object that could not be read is
// specNotActedOn's to report.
func invalidSpecNotStalled(e *evidence) ([]Violation, []Unjudged) {
	tr, obj := e.tr, e.object
	if !tr.invalid || e.objectErr != nil {
		return nil, nil
	}
	verdict := kstatusOf(obj)
	stalled := conditionOf(obj, conditions.Stalled)
	switch {
	case stalled == nil || stalled["status"] != "True" || stalled["reason"] == "":
		return []Violation{{Oracle: InvalidSpecNotStalled, Detail: fmt.Sprintf(
			"after %s, the operator settled with %s not Stalled (kstatus %s; its conditions: %s)", tr.describe(), tr.object, verdict, conditionsOf(obj))}}, nil
	case verdict != kstatus.FailedStatus.String():
		return []Violation{{Oracle: InvalidSpecNotStalled, Detail: fmt.Sprintf(
			"after %s, %s is Stalled (%v) but kstatus reads %s: its status is not of the generation that holds the invalid spec", tr.describe(), tr.object, stalled["reason"], verdict)}}, nil
	}
	return nil, nil
}

// retryStorm (RetryStorm, once an invalid transition has settled): the operator
// reconciled the object at most maxInvalidReconciles times from the transition to
// settling: no retry fixes an invalid spec.
func retryStorm(e *evidence) ([]Violation, []Unjudged) {
	if !e.tr.invalid || e.objectErr != nil || e.reconciled <= maxInvalidReconciles {
		return nil, nil
	}
	return []Violation{{Oracle: RetryStorm, Detail: fmt.Sprintf(
		"after %s, the operator reconciled %d times before it settled, more than %d", e.tr.describe(), e.reconciled, maxInvalidReconciles)}}, nil
}

// specNotActedOn (SpecNotActedOn, once a valid transition has settled): the new value
// reaches one of the fields of the object's children the reference run showed the spec
// field reaches (the explorer's mapping). A field the mapping has no place for is left
// to the other oracles. An object that could not be read once settled, valid or invalid
// transition, is this violation.
func specNotActedOn(e *evidence) ([]Violation, []Unjudged) {
	tr := e.tr
	if e.objectErr != nil {
		return []Violation{{Oracle: SpecNotActedOn, Detail: fmt.Sprintf("after %s: %v", tr.describe(), e.objectErr)}}, nil
	}
	if tr.invalid {
		return nil, nil
	}
	value := tr.value
	if tr.remove {
		value = tr.seen
	}
	where := e.ex.mapping[tr.object][strings.Join(tr.path, ".")]
	if value == nil || len(where) == 0 {
		return nil, nil
	}
	if e.familyErr != nil {
		return []Violation{{Oracle: SpecNotActedOn, Detail: e.familyErr.Error()}}, nil
	}
	children := map[string]any{}
	for k, o := range e.family {
		if k != tr.object {
			flatten(o, k+":", children)
		}
	}
	// One of them may hold the value by chance (a probe's threshold of 3 for 3
	// replicas): the value must reach one at least.
	var held []string
	for _, w := range where {
		got := children[w]
		if fmt.Sprint(got) == fmt.Sprint(jsonValue(value)) {
			return nil, nil
		}
		held = append(held, fmt.Sprintf("%s = %v", w, got))
	}
	return []Violation{{Oracle: SpecNotActedOn, Detail: fmt.Sprintf(
		"after %s, the operator settled with %s, none of them %v, where the reference run always had the value of spec.%s; kstatus reads %s %s",
		tr.describe(), strings.Join(held, ", "), value, strings.Join(tr.path, "."), tr.object, kstatusOf(e.object))}}, nil
}

// kstatusOf is kstatus' reading of obj, "unknown" if it has none.
func kstatusOf(obj *unstructured.Unstructured) string {
	if r, err := kstatus.Compute(obj); err == nil {
		return r.Status.String()
	}
	return "unknown"
}

// notRecovered (NotRecovered, once the spec before a transition is back and settled):
// the object and its children are as they were before the transition (recovered).
func notRecovered(e *evidence) ([]Violation, []Unjudged) {
	return recovered(*e.tr, e.before, e.after), nil
}

// specNotReached (SpecNotReached, once a spec run and its run from scratch have both
// ended): the differential oracle (reached).
func specNotReached(e *evidence) ([]Violation, []Unjudged) {
	vs, u := reached(*e.tr, e.got, e.fresh)
	if u != nil {
		return vs, []Unjudged{*u}
	}
	return vs, nil
}

// recovered compares the state of the object and its children once the spec is back with
// the state before the transition: the operator must converge to it again. A condition
// the operator left as it was (leftAsItWas) is recovered: it makes the same claim for the
// same spec.
func recovered(tr transition, before, after state) []Violation {
	after = leftAsItWas(before, after)
	if d := cmp.Diff(before, after); d != "" {
		return []Violation{{Oracle: NotRecovered, Detail: fmt.Sprintf(
			"after %s and the return to the spec before it, %s and its children differ from what they were before (-before +after):\n%s", tr.describe(), tr.object, d)}}
	}
	return nil
}

// leftAsItWas returns after with each condition that is the same as in before but for
// being further behind the generation given before's observedGeneration: a condition
// the operator did not write again. The transition and the return each take the
// generation one on, so such a condition reads "<2 behind>" where it read "<current>";
// what it says is what it said for the same spec. An At whose command has run keeps
// the Succeeded of that run, written once, for ever (on a simulated cluster, where its
// pod ends). A condition written again, or one whose status, reason or message changed,
// is compared as it is.
func leftAsItWas(before, after state) state {
	out := state{}
	for key, o := range after {
		b, ok := before[key]
		if !ok {
			out[key] = o
			continue
		}
		was := conditionsByType(b)
		o = maps.Clone(o)
		if status, ok := o["status"].(map[string]any); ok {
			conds, _ := status["conditions"].([]any)
			conds = slices.Clone(conds)
			for i, c := range conds {
				m, _ := c.(map[string]any)
				old, ok := was[fmt.Sprint(m["type"])]
				if !ok || behind(m["observedGeneration"]) <= behind(old["observedGeneration"]) {
					continue
				}
				m = maps.Clone(m)
				m["observedGeneration"] = old["observedGeneration"]
				if cmp.Equal(m, old) {
					conds[i] = m
				}
			}
			status = maps.Clone(status)
			status["conditions"] = conds
			o["status"] = status
		}
		out[key] = o
	}
	return out
}

// conditionsByType are the conditions of the normalised object o, by type.
func conditionsByType(o map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	status, _ := o["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			out[fmt.Sprint(m["type"])] = m
		}
	}
	return out
}

// behind is how many generations a normalised observedGeneration ("<current>",
// "<2 behind>") is behind, -1 if it is neither.
func behind(og any) float64 {
	s, _ := og.(string)
	if s == "<current>" {
		return 0
	}
	var n float64
	if _, err := fmt.Sscanf(s, "<%g behind>", &n); err == nil {
		return n
	}
	return -1
}

func conditionOf(obj *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func conditionsOf(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var s []string
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			s = append(s, fmt.Sprintf("%v=%v (%v)", m["type"], m["status"], m["reason"]))
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// generation is the object's metadata.generation, 0 if it cannot be read.
func (ex *explorer) generation(ctx context.Context, c client.Client, namespace, object string) int64 {
	o, err := ex.objectOf(ctx, c, namespace, object)
	if err != nil {
		return 0
	}
	return o.GetGeneration()
}

// shrink finds a shortest sequence of steps in which the transition of p still faults an
// oracle that faulted in got: it leaves the workload's steps out one at a time, keeping
// out each whose absence keeps a violation of one of those oracles, and returns the
// sequence left, for the run's report, with the runs it made.
func (ex *explorer) shrink(t *testing.T, p perturbation, got *result) (string, int) {
	oracles := map[Oracle]bool{}
	for _, v := range got.findings {
		oracles[v.Oracle] = true
	}
	drop := map[int]bool{}
	runs := 0
	for i := range ex.x.Workload {
		if i == p.tr.step {
			continue
		}
		try := maps.Clone(drop)
		try[i] = true
		q := p
		q.drop = try
		r := ex.run(t, fmt.Sprintf("%s-shrink-without-step-%d", p.name(), i+1), q)
		runs++
		if r.broken == nil && slices.ContainsFunc(r.findings, func(v Violation) bool { return oracles[v.Oracle] }) {
			drop = try
		}
	}
	var b strings.Builder
	b.WriteString("minimal failing step sequence:\n")
	n := 0
	for i, s := range ex.x.Workload {
		if drop[i] {
			continue
		}
		n++
		fmt.Fprintf(&b, "  %d. %s\n", n, s.Name)
		if i == p.tr.step {
			fmt.Fprintf(&b, "  %d. spec transition: %s\n", n+1, p.tr.describe())
			fmt.Fprintf(&b, "  %d. the spec before it written back\n", n+2)
			n += 2
		}
	}
	t.Log(b.String())
	return b.String(), runs
}
