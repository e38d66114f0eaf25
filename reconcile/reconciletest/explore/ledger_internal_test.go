package explore

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAChildRenamedByASpecTransitionAndMadeAgainIsNotCreatedTwice(t *testing.T) {
	created := func(name, phase string) write {
		return write{Verb: "create", Resource: "jobs", Group: "batch", Name: name, Code: 201, Phase: phase}
	}
	deleted := func(name, phase string) write {
		return write{Verb: "delete", Resource: "jobs", Group: "batch", Name: name, Code: 200, Phase: phase}
	}
	ref := &result{writes: []write{created("init-a", "")}}
	for _, tc := range []struct {
		name   string
		writes []write
		want   []Oracle
	}{
		{"renamed by a transition and back", []write{
			created("init-a", ""), created("init-b", "transition"), deleted("init-a", "transition"),
			created("init-a", "restore"), deleted("init-b", "restore"),
		}, nil},
		{"deleted and made again outside a transition", []write{
			created("init-a", ""), deleted("init-a", ""), created("init-a", ""),
		}, []Oracle{CreatedTwice, DeletedWrongly}},
		{"made again while it still existed", []write{
			created("init-a", ""), created("init-a", "transition"),
		}, []Oracle{CreatedTwice}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &explorer{}
			got := &result{writes: tc.writes}
			var oracles []Oracle
			vs, _ := ex.judgeAt(atEnd, &evidence{got: got, ref: ref})
			for _, v := range vs {
				oracles = append(oracles, v.Oracle)
			}
			if len(oracles) != len(tc.want) {
				t.Fatalf("found %v, want %v", oracles, tc.want)
			}
			for i := range oracles {
				if oracles[i] != tc.want[i] {
					t.Errorf("found %v, want %v", oracles, tc.want)
				}
			}
		})
	}
}

func TestChildrenNamedByGenerateNameAreToldApartByPurposeNotCount(t *testing.T) {
	child := func(name, uid, purpose string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "generateName": "shop-", "uid": uid, "namespace": "ns",
				"ownerReferences": []any{map[string]any{"kind": "Shop", "name": "shop", "controller": true, "uid": "owner"}}},
			"data": map[string]any{"purpose": purpose},
		}}
	}
	ex := &explorer{}
	twoPurposes := &result{namespace: "ns", objects: map[string]*unstructured.Unstructured{
		"ConfigMap shop-abcde": child("shop-abcde", "1", "settings"),
		"ConfigMap shop-fghij": child("shop-fghij", "2", "scripts"),
	}}
	if vs := ex.createdAgain(twoPurposes); len(vs) != 0 {
		t.Errorf("two children for two purposes: %v", vs)
	}
	onePurpose := &result{namespace: "ns", objects: map[string]*unstructured.Unstructured{
		"ConfigMap shop-abcde": child("shop-abcde", "1", "settings"),
		"ConfigMap shop-fghij": child("shop-fghij", "2", "settings"),
	}}
	if vs := ex.createdAgain(onePurpose); len(vs) != 1 {
		t.Errorf("two children for one purpose: %v", vs)
	}
	a := normalise(twoPurposes.objects, "ns", nil)
	swapped := normalise(map[string]*unstructured.Unstructured{
		"ConfigMap shop-aaaaa": child("shop-aaaaa", "3", "scripts"),
		"ConfigMap shop-zzzzz": child("shop-zzzzz", "4", "settings"),
	}, "ns", nil)
	if len(a) != 2 || a["ConfigMap shop-<generated>"]["data"].(map[string]any)["purpose"] != swapped["ConfigMap shop-<generated>"]["data"].(map[string]any)["purpose"] {
		t.Errorf("the states of two runs order their generated children by their random names: %v, %v", a, swapped)
	}
}

func TestADeleteOfWhatASpecTransitionMadeIsNotDeletedWrongly(t *testing.T) {
	deleted := func(name string) write {
		return write{Verb: "delete", Resource: "persistentvolumeclaims", Name: name, Code: 200}
	}
	// The reference run deletes the claims of 3 replicas; a transition to 5 had the
	// StatefulSet's controller make two more, which the last step deletes with the rest.
	ref := &result{writes: []write{deleted("data-kv-0"), deleted("data-kv-1"), deleted("data-kv-2")}}
	for _, tc := range []struct {
		name  string
		class Class
		got   []write
		want  int
	}{
		{"in a spec run, a claim the reference never had", Spec, []write{deleted("data-kv-0"), deleted("data-kv-3")}, 0},
		{"in a spec run, a claim the reference had deleted twice", Spec, []write{deleted("data-kv-0"), deleted("data-kv-0")}, 1},
		{"in a crash run, a claim the reference never had", Crash, []write{deleted("data-kv-3")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := churn(ref, &result{p: perturbation{class: tc.class}, writes: tc.got}, "delete")
			if len(vs) != tc.want {
				t.Errorf("found %v, want %d deleted wrongly", vs, tc.want)
			}
		})
	}
}
