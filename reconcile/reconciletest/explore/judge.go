package explore

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The judges of the oracles of the list (oracles), in its order, each reading the
// evidence of its moment alone; those of the spec transitions, from invalid spec not
// stalled on, are in spec.go.

// endState (EndState, at the run's end): the end state of a perturbed run is the
// reference run's; and, in a run perturbed at a point, the state each step but the last
// settled in is the reference run's after that step, its own objects' status apart
// (stepStates).
func endState(e *evidence) ([]Violation, []Unjudged) {
	got, ref := e.got, e.ref
	if ref == nil {
		return nil, nil
	}
	var vs []Violation
	if got.end != nil && ref.end != nil {
		if d := cmp.Diff(ref.end, got.end); d != "" {
			vs = append(vs, Violation{Oracle: EndState, Detail: "the end state differs from the reference run's (-reference +this run):\n" + d})
		}
	}
	return append(vs, e.ex.stepStates(got, ref)...), nil
}

// createdTwice (CreatedTwice, at the run's end): no object is created twice, neither two
// of it alive at once (createdAgain) nor more creates of it than in the reference run,
// outside a spec transition (churn).
func createdTwice(e *evidence) ([]Violation, []Unjudged) {
	vs := e.ex.createdAgain(e.got)
	if e.ref != nil {
		vs = append(vs, churn(e.ref, e.got, "create")...)
	}
	return vs, nil
}

// deletedWrongly (DeletedWrongly, at the run's end): no object is deleted more often than
// in the reference run, outside a spec transition (churn).
func deletedWrongly(e *evidence) ([]Violation, []Unjudged) {
	if e.ref == nil {
		return nil, nil
	}
	return churn(e.ref, e.got, "delete"), nil
}

// writesOnceConverged (WritesOnceConverged, in the reference run once a fresh operator
// started after a step has settled): the fresh operator, reconciling every object again,
// writes nothing. Writes made while others still changed the objects (the last of
// restartTries proofs) are unjudged: they may be news.
func writesOnceConverged(e *evidence) ([]Violation, []Unjudged) {
	if len(e.restarted) == 0 {
		return nil, nil
	}
	if len(e.moved) > 0 {
		return nil, []Unjudged{{Oracle: WritesOnceConverged, reason: "others still changing the objects", Why: fmt.Sprintf(
			"after step %d (%s), a restarted operator wrote %d times (%s) while others changed %s, in each of %d proofs",
			e.step+1, e.ex.x.Workload[e.step].Name, len(e.restarted), joinWrites(e.restarted), strings.Join(e.moved, ", "), restartTries)}}
	}
	return []Violation{{Oracle: WritesOnceConverged, Detail: fmt.Sprintf(
		"after step %d (%s), a restarted operator wrote %d times: %s", e.step+1, e.ex.x.Workload[e.step].Name, len(e.restarted), joinWrites(e.restarted))}}, nil
}

// currentTooEarly (CurrentTooEarly, once a step, a transition or a return has settled):
// each Current verdict (kstatus) written since the run last settled was written with the
// children its object has now; one whose children could not be read is unjudged.
func currentTooEarly(e *evidence) ([]Violation, []Unjudged) {
	var vs []Violation
	var us []Unjudged
	for _, c := range e.claims {
		if c.err != nil {
			us = append(us, Unjudged{Oracle: CurrentTooEarly, reason: "children not read", Why: fmt.Sprintf(
				"after step %d, the children of %s %s, made Current by write %d, could not be read: %v", e.step+1, c.kind, c.name, c.write, c.err)})
			continue
		}
		if d := cmp.Diff(c.children, c.now); d != "" {
			vs = append(vs, Violation{Oracle: CurrentTooEarly, Detail: fmt.Sprintf(
				"write %d made %s %s Current (kstatus) before the objects it controls had settled (-then +settled):\n%s", c.write, c.kind, c.name, d)})
		}
	}
	return vs, us
}

// neverSettled (NeverSettled, as each wait to settle ends): the operator was quiet within
// the settle limit and 200 writes; a run out of time (outOfTime) is unjudged.
func neverSettled(e *evidence) ([]Violation, []Unjudged) {
	switch s := e.settling; {
	case !s.gaveUp:
		return nil, nil
	case s.outOfTime != "":
		return nil, []Unjudged{{Oracle: NeverSettled, reason: "out of time", Why: s.outOfTime}}
	}
	return []Violation{{Oracle: NeverSettled, Detail: fmt.Sprintf(
		"after step %d the operator made %d writes and did not settle", e.step+1, e.settling.writes)}}, nil
}

// stepStates compares the state each step of got settled in, but the last, with the
// reference run's after the same step, the status of the operator's own objects apart:
// the first step at which they differ is an end state violation. The end state alone
// does not see a child the operator left wrong while its owner lived: on a simulated
// cluster the garbage collector deletes it with the owner the workload deletes, in
// every run alike (a Deployment never scaled to the new size, or never made). The
// status of the operator's objects is left to the end state: between steps it follows
// what the cluster's controllers do at their own pace (a Deployment's rollout, a pod
// that ends), which the settling of the operator does not wait for.
func (ex *explorer) stepStates(got, ref *result) []Violation {
	for _, i := range slices.Sorted(maps.Keys(got.settledAt)) {
		if i >= len(ref.snapshots) {
			continue
		}
		want := ex.withoutOwnStatus(ex.normalise(ref.snapshots[i], ref.namespace))
		have := ex.withoutOwnStatus(ex.normalise(got.settledAt[i], got.namespace))
		if d := cmp.Diff(want, have); d != "" {
			return []Violation{{Oracle: EndState, Detail: fmt.Sprintf(
				"once step %d (%s) settled, the objects differ from the reference run's after it, their status apart (-reference +this run):\n%s",
				i+1, ex.x.Workload[i].Name, d)}}
		}
	}
	return nil
}

// withoutOwnStatus is s without the status of the objects of the operator's kinds.
func (ex *explorer) withoutOwnStatus(s state) state {
	out := state{}
	for k, o := range s {
		if kind, _, _ := strings.Cut(k, " "); ex.ours[kind] {
			o = maps.Clone(o)
			delete(o, "status")
		}
		out[k] = o
	}
	return out
}

// createdAgain finds an object created twice: two accepted creates of one name with no
// accepted delete between them, or two objects named by generateName under one owner
// where the workload made one.
func (ex *explorer) createdAgain(got *result) []Violation {
	var vs []Violation
	live := map[string]int{}
	for i, w := range got.writes {
		key := w.Group + "/" + w.Resource + "/" + w.Name
		switch {
		case w.Subresource != "" || !w.accepted():
		case w.Verb == "create" && !strings.HasSuffix(w.Name, "<generated>"):
			if prev, ok := live[key]; ok {
				vs = append(vs, Violation{Oracle: CreatedTwice, Detail: fmt.Sprintf(
					"write %d created %s %s again, which write %d had created", i+1, w.Resource, w.Name, prev)})
			}
			live[key] = i + 1
		case w.Verb == "delete":
			delete(live, key)
		}
	}
	// Children named by generateName are told apart by what they are for: what they
	// hold, masked, but their names. Two alike under one owner are one child made twice.
	byOwner := map[string][]string{}
	for _, o := range got.objects {
		if o.GetGenerateName() == "" {
			continue
		}
		kind, name, ok := controllerOf(o.Object)
		if !ok {
			continue
		}
		key := o.GetKind() + " " + o.GetGenerateName() + "<generated>"
		s := state{key: normaliseObject(o.Object, got.namespace, map[string]bool{string(o.GetUID()): true})}
		delete(s[key], "status")
		mask(s, ex.masks)
		purpose, _ := json.Marshal(s[key])
		k := o.GetKind() + " " + o.GetGenerateName() + " of " + kind + " " + name + "\x00" + string(purpose)
		byOwner[k] = append(byOwner[k], o.GetName())
	}
	for _, k := range mapsKeys(byOwner) {
		if names := byOwner[k]; len(names) > 1 {
			what, _, _ := strings.Cut(k, "\x00")
			vs = append(vs, Violation{Oracle: CreatedTwice, Detail: fmt.Sprintf(
				"%s: %d objects named by generateName for one purpose (alike but for their names), %s", what, len(names), strings.Join(names, ", "))})
		}
	}
	return vs
}

// churn finds objects the run created (verb "create") or deleted ("delete") more often
// than the reference run did: an object deleted and made again is one whose data, pods or
// claims a user loses.
func churn(ref, got *result, verb string) []Violation {
	count := func(ws []write) map[string]int {
		generated := map[string]string{} // an object's name → its generateName's <generated>
		n := map[string]int{}
		for _, w := range ws {
			if !w.accepted() || w.Subresource != "" || (w.Verb != "create" && w.Verb != "delete") {
				continue
			}
			if w.Phase != "" {
				// A spec transition may change the names of the children the operator
				// wants: the old deleted, the new made, and the old made again when the
				// spec comes back. The differential oracle and "not recovered" judge
				// what it made of the transition; createdTwice two live at once.
				continue
			}
			name := w.Name
			if w.Verb == "create" && w.Object != nil {
				md, _ := w.Object["metadata"].(map[string]any)
				if g, _ := md["generateName"].(string); g != "" {
					generated[w.Resource+"/"+name] = g + "<generated>"
				}
			}
			if g, ok := generated[w.Resource+"/"+name]; ok {
				name = g
			}
			n[w.Verb+" "+w.Resource+" "+name]++
		}
		return n
	}
	want, have := count(ref.writes), count(got.writes)
	// In a spec run, an object the reference run never wrote came to be from the
	// transition: the claims a StatefulSet's controller makes for the replicas a
	// transition adds, which it keeps when the spec comes back, and which the workload's
	// last step has the operator delete with the rest. Its delete is the cleanup of what
	// the transition made, judged by the differential and "not recovered", not a delete
	// the reference run did not make.
	written := map[string]bool{}
	for _, w := range ref.writes {
		written[w.Resource+" "+w.Name] = true
	}
	var vs []Violation
	for _, k := range mapsKeys(have) {
		v, what, _ := strings.Cut(k, " ")
		if v != verb || have[k] <= want[k] {
			continue
		}
		if verb == "delete" && got.p.class == Spec && !written[what] {
			continue
		}
		oracle := CreatedTwice
		if verb == "delete" {
			oracle = DeletedWrongly
		}
		vs = append(vs, Violation{Oracle: oracle, Detail: fmt.Sprintf(
			"the operator sent %d accepted %s of %s, the reference run %d", have[k], verb, what, want[k])})
	}
	return vs
}

// notControlled (NotControlled, at the run's end) finds writes of objects that are not
// the operator's: ones the workload created as someone else's, or ones controlled by an
// object of a kind the operator neither reconciles nor owns.
func notControlled(e *evidence) ([]Violation, []Unjudged) {
	ex, got := e.ex, e.got
	var vs []Violation
	for i, w := range got.writes {
		if !w.accepted() {
			continue
		}
		if ex.foreign[w.Group+"/"+w.Resource+"/"+w.Name] {
			vs = append(vs, Violation{Oracle: NotControlled, Detail: fmt.Sprintf(
				"write %d (%s) wrote %s %s, which the workload created as someone else's", i+1, w, w.Resource, w.Name)})
			continue
		}
		if w.Object == nil || w.Object["kind"] == "Status" {
			continue
		}
		// Controlled by one of its objects, or by one of its children (a StatefulSet's
		// claims): the operator's to write.
		if kind, name, ok := controllerOf(w.Object); ok && !ex.ours[kind] && !ex.owned[kind] {
			vs = append(vs, Violation{Oracle: NotControlled, Detail: fmt.Sprintf(
				"write %d (%s) wrote %s %s, which %s %s controls", i+1, w, w.Resource, w.Name, kind, name)})
		}
	}
	return vs, nil
}

// leftBehind (LeftBehind, at the run's end) finds, once the workload has deleted every
// object of the operator's kinds, an object of them still there (a finalizer never
// removed), and an object the operator created that nothing owns, which no garbage
// collector would delete.
func leftBehind(e *evidence) ([]Violation, []Unjudged) {
	ex, got := e.ex, e.got
	var vs []Violation
	for _, key := range mapsKeys(got.objects) {
		o := got.objects[key]
		if ex.ours[o.GetKind()] && got.deleted[key] {
			vs = append(vs, Violation{Oracle: LeftBehind, Detail: fmt.Sprintf(
				"%s was deleted by the workload and is still there, with finalizers %v", key, o.GetFinalizers())})
		}
	}
	for _, key := range mapsKeys(got.objects) {
		if ex.ours[got.objects[key].GetKind()] && !got.deleted[key] {
			return vs, nil // a custom resource is still there: its children may stay
		}
	}
	created := map[string]bool{}
	for _, w := range got.writes {
		if w.accepted() && (w.Verb == "create" || w.Verb == "patch") && w.Subresource == "" && w.Object != nil {
			if k, _ := w.Object["kind"].(string); k != "" {
				created[keyOf(k, nameOf(&reconciletest.Request{}, w.Object), got.namespace)] = true
			}
		}
	}
	for _, key := range mapsKeys(got.objects) {
		o := got.objects[key]
		if created[key] && !ex.ours[o.GetKind()] && len(o.GetOwnerReferences()) == 0 {
			vs = append(vs, Violation{Oracle: LeftBehind, Detail: fmt.Sprintf(
				"%s, which the operator created, is still there with no owner for the garbage collector, though the workload deleted every %s", key, strings.Join(mapsKeys(ex.ours), ", "))})
		}
	}
	return vs, nil
}
