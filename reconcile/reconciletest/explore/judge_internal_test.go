package explore

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// oracleNamed is the oracle of the list named name.
func oracleNamed(t *testing.T, name Oracle) oracle {
	t.Helper()
	for _, o := range oracles {
		if o.name == name {
			return o
		}
	}
	t.Fatalf("no oracle is named %q", name)
	return oracle{}
}

// oracleCase is an oracle's rule, with the evidence of a run that breaks it and of one
// alike that keeps it.
type oracleCase struct {
	oracle       Oracle
	name         string // the rule the broken run breaks
	broken, kept *evidence
}

// oracleCases are a case or more of each oracle, each judged with the explorer ex.
func oracleCases() (ex *explorer, cases []oracleCase) {
	const shop = "Shop shop"
	ex = &explorer{
		x:       Exploration{Workload: []Step{{Name: "create"}, {Name: "delete"}}},
		ours:    map[string]bool{"Shop": true},
		owned:   map[string]bool{"Deployment": true},
		foreign: map[string]bool{"apps/deployments/theirs": true},
		mapping: mapping{shop: {"size": {"Deployment shop:spec.replicas"}}},
	}
	configMap := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "shop", "namespace": "ns"}, "data": map[string]any{"k": v}}}
	}
	objects := func(v string) map[string]*unstructured.Unstructured {
		return map[string]*unstructured.Unstructured{"ConfigMap shop": configMap(v)}
	}
	replicas := func(n float64) state {
		return state{shop: {"kind": "Shop"}, "Deployment shop": {"kind": "Deployment", "spec": map[string]any{"replicas": n}}}
	}
	writeOf := func(verb, group, resource, name string, obj map[string]any) write {
		return write{Verb: verb, Group: group, Resource: resource, Name: name, Code: 200, Object: obj}
	}
	created, deleted := writeOf("create", "", "configmaps", "shop", nil), writeOf("delete", "", "configmaps", "shop", nil)
	shopObject := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": "Shop",
			"metadata": map[string]any{"name": "shop", "generation": int64(2)},
			"status":   map[string]any{"observedGeneration": int64(2), "conditions": conds}}}
	}
	stalled := map[string]any{"type": "Stalled", "status": "True", "reason": "SizeInvalid"}
	invalid := &transition{object: shop, path: []string{"size"}, value: int64(-1), invalid: true}
	size3 := &transition{object: shop, path: []string{"size"}, value: int64(3)}
	claim := func(then, now float64) []currentClaim {
		return []currentClaim{{write: 2, kind: "Shop", name: "shop", children: replicas(then), now: replicas(now)}}
	}
	return ex, []oracleCase{
		{EndState, "the end state is the reference run's",
			&evidence{got: &result{end: state{"ConfigMap shop": {"data": "b"}}}, ref: &result{end: state{"ConfigMap shop": {"data": "a"}}}},
			&evidence{got: &result{end: state{"ConfigMap shop": {"data": "a"}}}, ref: &result{end: state{"ConfigMap shop": {"data": "a"}}}}},
		{EndState, "a step settles in the reference run's state",
			&evidence{got: &result{namespace: "ns", settledAt: map[int]map[string]*unstructured.Unstructured{0: objects("b")}}, ref: &result{namespace: "ns", snapshots: []map[string]*unstructured.Unstructured{objects("a")}}},
			&evidence{got: &result{namespace: "ns", settledAt: map[int]map[string]*unstructured.Unstructured{0: objects("a")}}, ref: &result{namespace: "ns", snapshots: []map[string]*unstructured.Unstructured{objects("a")}}}},
		{CreatedTwice, "no second create of a name with no delete between",
			&evidence{got: &result{writes: []write{created, created}}},
			&evidence{got: &result{writes: []write{created, deleted, created}}}},
		{CreatedTwice, "no more creates than the reference run",
			&evidence{got: &result{writes: []write{created, deleted, created}}, ref: &result{writes: []write{created}}},
			&evidence{got: &result{writes: []write{created, deleted, created}}, ref: &result{writes: []write{created, deleted, created}}}},
		{DeletedWrongly, "no more deletes than the reference run",
			&evidence{got: &result{writes: []write{created, deleted}}, ref: &result{writes: []write{created}}},
			&evidence{got: &result{writes: []write{created, deleted}}, ref: &result{writes: []write{created, deleted}}}},
		{NotControlled, "no write of what the workload made as someone else's",
			&evidence{got: &result{writes: []write{writeOf("patch", "apps", "deployments", "theirs", nil)}}},
			&evidence{got: &result{writes: []write{writeOf("patch", "apps", "deployments", "shop", nil)}}}},
		{NotControlled, "no write of what another kind controls",
			&evidence{got: &result{writes: []write{writeOf("patch", "apps", "deployments", "shop", controlledBy("Other"))}}},
			&evidence{got: &result{writes: []write{writeOf("patch", "apps", "deployments", "shop", controlledBy("Shop"))}}}},
		{LeftBehind, "nothing of the operator's kinds is left once deleted",
			&evidence{got: &result{deleted: map[string]bool{shop: true}, objects: map[string]*unstructured.Unstructured{shop: shopObject()}}},
			&evidence{got: &result{deleted: map[string]bool{shop: true}}}},
		{WritesOnceConverged, "a restarted operator writes nothing",
			&evidence{step: 0, restarted: []write{writeOf("update", "apps", "deployments", "shop", nil)}},
			&evidence{step: 0}},
		{CurrentTooEarly, "Current once the children have settled",
			&evidence{claims: claim(1, 3)},
			&evidence{claims: claim(3, 3)}},
		{NeverSettled, "the operator settles",
			&evidence{settling: settling{gaveUp: true, writes: 201}},
			&evidence{settling: settling{writes: 4}}},
		{InvalidSpecNotStalled, "an invalid spec leaves the object Stalled",
			&evidence{tr: invalid, object: shopObject()},
			&evidence{tr: invalid, object: shopObject(stalled)}},
		{RetryStorm, "an invalid spec is reconciled a bounded number of times",
			&evidence{tr: invalid, object: shopObject(stalled), reconciled: maxInvalidReconciles + 1},
			&evidence{tr: invalid, object: shopObject(stalled), reconciled: 2}},
		{SpecNotActedOn, "a new value reaches a child",
			&evidence{tr: size3, object: shopObject(), family: replicas(1)},
			&evidence{tr: size3, object: shopObject(), family: replicas(3)}},
		{SpecNotActedOn, "the object is read once settled",
			&evidence{tr: size3, objectErr: errors.New("gone")},
			&evidence{tr: size3, object: shopObject(), family: replicas(3)}},
		{NotRecovered, "the spec back, the children are as before",
			&evidence{tr: size3, before: replicas(1), after: replicas(3)},
			&evidence{tr: size3, before: replicas(1), after: replicas(1)}},
		{SpecNotReached, "the children are a fresh operator's for the spec",
			&evidence{tr: size3, got: &result{transitioned: replicas(1)}, fresh: &result{family: replicas(3)}},
			&evidence{tr: size3, got: &result{transitioned: replicas(3)}, fresh: &result{family: replicas(3)}}},
	}
}

// TestEachOracleFaultsARunThatBreaksItsRuleAndNotOneThatKeepsIt: each oracle, alone, on
// the evidence of its moment made by hand: a run that breaks its rule, and one alike
// that keeps it.
func TestEachOracleFaultsARunThatBreaksItsRuleAndNotOneThatKeepsIt(t *testing.T) {
	ex, cases := oracleCases()
	for _, tc := range cases {
		o := oracleNamed(t, tc.oracle)
		t.Run(string(tc.oracle)+"/"+tc.name, func(t *testing.T) {
			for _, e := range []*evidence{tc.broken, tc.kept} {
				e.ex = ex
				if e.got == nil {
					e.got = &result{}
				}
			}
			vs, us := o.judge(tc.broken)
			if len(vs) == 0 || len(us) > 0 {
				t.Errorf("breaking the rule: found %v, unjudged %v; want a violation", vs, us)
			}
			for _, v := range vs {
				if v.Oracle != tc.oracle {
					t.Errorf("breaking the rule: %v, found by another oracle than %q", v, tc.oracle)
				}
			}
			if vs, us := o.judge(tc.kept); len(vs) > 0 || len(us) > 0 {
				t.Errorf("keeping the rule: found %v, unjudged %v; want nothing", vs, us)
			}
		})
	}
}

func controlledBy(kind string) map[string]any {
	return map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "shop",
		"ownerReferences": []any{map[string]any{"kind": kind, "name": "shop", "controller": true}}}}
}

// TestAnOracleThatCannotJudgeSaysWhy: what an oracle cannot judge is unjudged, with why,
// and is no violation.
func TestAnOracleThatCannotJudgeSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		oracle Oracle
		name   string
		e      *evidence
		why    string // what Unjudged.Why says
	}{
		{NeverSettled, "a run out of time", &evidence{step: 1, settling: settling{gaveUp: true, writes: 3, outOfTime: "too slow a machine"}}, "too slow a machine"},
		{CurrentTooEarly, "children not read", &evidence{step: 1, claims: []currentClaim{{write: 2, kind: "Shop", name: "shop", err: errors.New("forbidden")}}}, "could not be read: forbidden"},
		{SpecNotReached, "a run from scratch that never settled", &evidence{tr: &transition{object: "Shop shop"}, got: &result{}, fresh: &result{outOfTime: true}}, "never settled"},
		{WritesOnceConverged, "writes while others changed the objects", &evidence{step: 0,
			restarted: []write{{Verb: "update", Resource: "shops", Name: "shop", Code: 200}}, moved: []string{"Job shop-init"}}, "while others changed Job shop-init"},
	} {
		t.Run(string(tc.oracle)+"/"+tc.name, func(t *testing.T) {
			tc.e.ex, _ = oracleCases()
			vs, us := oracleNamed(t, tc.oracle).judge(tc.e)
			if len(vs) > 0 || len(us) != 1 {
				t.Fatalf("found %v, unjudged %v; want one unjudged", vs, us)
			}
			if us[0].Oracle != tc.oracle || !strings.Contains(us[0].Why, tc.why) {
				t.Errorf("unjudged %s, want [%s] saying %q", us[0], tc.oracle, tc.why)
			}
		})
	}
}

// TestEveryOracleIsTestedAlone: an oracle added to the list without a case of its own
// (oracleCases) fails here.
func TestEveryOracleIsTestedAlone(t *testing.T) {
	_, cases := oracleCases()
	for _, o := range oracles {
		if !slices.ContainsFunc(cases, func(c oracleCase) bool { return c.oracle == o.name }) {
			t.Errorf("the oracle %q has no case in oracleCases", o.name)
		}
	}
}

// TestObjectsMovedByOthersAreThoseNoWriteOfTheOperatorExplains: a restarted operator's
// writes are news when others changed the objects meanwhile; what its own writes changed
// or deleted is not such a change.
func TestObjectsMovedByOthersAreThoseNoWriteOfTheOperatorExplains(t *testing.T) {
	answer := func(verb, name, version string) write {
		return write{Verb: verb, Name: name, Object: map[string]any{"metadata": map[string]any{"name": name, "resourceVersion": version}}}
	}
	for _, tc := range []struct {
		name          string
		before, after map[string]string
		writes        []write
		want          []string
	}{
		{"nothing changed", map[string]string{"Shop shop": "1"}, map[string]string{"Shop shop": "1"}, nil, nil},
		{"the operator's status write", map[string]string{"Shop shop": "1"}, map[string]string{"Shop shop": "5"},
			[]write{answer("update", "shop", "5")}, nil},
		{"a Job the Job controller completed", map[string]string{"Shop shop": "1", "Job shop-init": "2"}, map[string]string{"Shop shop": "5", "Job shop-init": "4"},
			[]write{answer("update", "shop", "5")}, []string{"Job shop-init"}},
		{"an object someone else made", map[string]string{}, map[string]string{"Pod shop-init-x": "3"}, nil, []string{"Pod shop-init-x"}},
		{"an object the operator deleted", map[string]string{"Job shop-old": "2"}, map[string]string{}, []write{{Verb: "delete", Name: "shop-old"}}, nil},
		{"an object the collector deleted", map[string]string{"Pod shop-old-x": "2"}, map[string]string{}, nil, []string{"Pod shop-old-x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := movedByOthers(tc.before, tc.after, tc.writes); !slices.Equal(got, tc.want) {
				t.Errorf("moved %v, want %v", got, tc.want)
			}
		})
	}
}
