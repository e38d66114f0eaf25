package explore

import (
	"strings"
	"testing"

	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// TestTheDifferentialOracleJudgesEveryValidTransitionOrSaysWhyNot: a transition is judged
// by the children a fresh operator makes from scratch whatever kstatus reads the object
// (an operator whose readiness follows a Deployment is InProgress for good on an API
// server alone), and one it cannot judge is unjudged, with why, never skipped in silence.
func TestTheDifferentialOracleJudgesEveryValidTransitionOrSaysWhyNot(t *testing.T) {
	const shop = "Shop shop"
	tierRemoved := transition{object: shop, path: []string{"tier"}, remove: true}
	deployment := func(labels map[string]any) map[string]any {
		return map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "shop", "labels": labels}}
	}
	object := func(conds ...map[string]any) map[string]any {
		list := []any{}
		for _, c := range conds {
			list = append(list, c)
		}
		return map[string]any{"kind": "Shop", "status": map[string]any{"conditions": list}}
	}
	progressing := map[string]any{"type": "Ready", "status": "False", "reason": "Progressing"}
	stalled := map[string]any{"type": "Stalled", "status": "True", "reason": "ConfigMapNotFound"}
	paused := map[string]any{"type": "Paused", "status": "True", "reason": "Paused"}
	noTier := map[string]any{"app": "shop"}
	gold := map[string]any{"app": "shop", "tier": "gold"}
	family := func(obj map[string]any, labels map[string]any) state {
		return state{shop: obj, "Deployment shop": deployment(labels)}
	}
	never := []Violation{{Oracle: NeverSettled}}
	for _, tc := range []struct {
		name       string
		tr         transition
		got, fresh *result
		violation  bool
		unjudged   string // what Why must say; "" for judged
	}{
		{"InProgress, a label of the removed field kept", tierRemoved,
			&result{transitioned: family(object(progressing), gold), verdict: kstatus.InProgressStatus},
			&result{family: family(object(progressing), noTier)}, true, ""},
		{"Current, a label of the removed field kept", tierRemoved,
			&result{transitioned: family(object(), gold), verdict: kstatus.CurrentStatus},
			&result{family: family(object(), noTier)}, true, ""},
		{"InProgress, the label removed", tierRemoved,
			&result{transitioned: family(object(progressing), noTier), verdict: kstatus.InProgressStatus},
			&result{family: family(object(progressing), noTier)}, false, ""},
		{"a child of the old value left", transition{object: shop, path: []string{"tier"}, value: "silver"},
			&result{transitioned: state{shop: object(), "Deployment shop": deployment(noTier), "ConfigMap shop-gold": {"kind": "ConfigMap"}}},
			&result{family: family(object(), noTier)}, true, ""},
		{"the spec run never settled", tierRemoved,
			&result{transitioned: family(object(), gold), findings: never},
			&result{family: family(object(), noTier)}, false, "the operator never settled"},
		{"the run from scratch never settled", tierRemoved,
			&result{transitioned: family(object(), gold)},
			&result{family: family(object(), noTier), findings: never}, false, "the fresh operator never settled"},
		{"the run from scratch made no state", tierRemoved,
			&result{transitioned: family(object(), gold)},
			&result{}, false, "no state of the object was read"},
		{"the operator reports the spec Stalled", tierRemoved,
			&result{transitioned: family(object(stalled), gold)},
			&result{family: family(object(stalled), noTier)}, false, "reports Shop shop Stalled (ConfigMapNotFound)"},
		{"a fresh operator reports it Stalled", tierRemoved,
			&result{transitioned: family(object(), gold)},
			&result{family: family(object(stalled), nil)}, false, "a fresh operator reports Shop shop from scratch Stalled"},
		{"paused", tierRemoved,
			&result{transitioned: family(object(paused), gold)},
			&result{family: family(object(), noTier)}, false, "paused"},
		{"past the schema: judged by the invalid spec's oracles", transition{object: shop, path: []string{"tier"}, remove: true, past: true},
			&result{}, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, u := reached(tc.tr, tc.got, tc.fresh)
			if got := len(vs) > 0; got != tc.violation {
				t.Errorf("violation %v, want %v: %v", got, tc.violation, vs)
			}
			for _, v := range vs {
				if v.Oracle != SpecNotReached {
					t.Errorf("found by %q, want %q", v.Oracle, SpecNotReached)
				}
			}
			switch {
			case tc.unjudged == "" && u != nil:
				t.Errorf("unjudged: %s", u)
			case tc.unjudged != "" && u == nil:
				t.Errorf("judged, want unjudged saying %q", tc.unjudged)
			case u != nil && (!strings.Contains(u.Why, tc.unjudged) || u.Oracle != SpecNotReached):
				t.Errorf("unjudged %s, want [%s] saying %q", u, SpecNotReached, tc.unjudged)
			}
		})
	}
}
