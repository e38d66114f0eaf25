package main

import "testing"

// The plural is the one English gives the common kinds, and the one the copy pins.
func TestPluralFollowsTheCommonEnglishRules(t *testing.T) {
	for _, tc := range []struct{ lower, want string }{
		{"memcached", "memcacheds"}, {"podset", "podsets"}, {"at", "ats"},
		{"redis", "redises"}, {"box", "boxes"}, {"batch", "batches"}, {"mesh", "meshes"},
		{"policy", "policies"}, {"gateway", "gateways"}, {"key", "keys"},
	} {
		if got := plural(tc.lower); got != tc.want {
			t.Errorf("plural(%q) = %q, want %q", tc.lower, got, tc.want)
		}
	}
}

// The kind is renamed where it names the kind and kept where it may be English or name
// what the operator runs.
func TestRenameChangesTheKindAndKeepsEnglish(t *testing.T) {
	at := &renamer{oldKind: newWord("At", "ats"), newKind: newWord("Redis", "redises"), keepLower: true}
	memcached := &renamer{oldKind: newWord("Memcached", "memcacheds"), newKind: newWord("Index", "indexes"), keepLower: true}
	keyval := &renamer{oldKind: newWord("Keyval", "keyvals"), newKind: newWord("Ledger", "ledgers")}
	for _, tc := range []struct {
		name  string
		r     *renamer
		in    string
		prose bool
		want  string
	}{
		{"a name", at, "at-operator", false, "redis-operator"},
		{"a plural name", at, "resources=ats/status", false, "resources=redises/status"},
		{"an English word in a name", at, "attach", false, "attach"},
		{"an English word in prose", at, "runs a command once, at a scheduled time", true, "runs a command once, at a scheduled time"},
		{"a compound name in prose", at, "the at-operator user", true, "the redis-operator user"},
		{"the kind with its article", at, "the pod of an At", true, "the pod of a Redis"},
		{"a capital that opens a sentence", at, "is not. At most 64 characters.", true, "is not. At most 64 characters."},
		{"a plural kind in prose", at, "how many Ats at a time", true, "how many Redises at a time"},
		{"a kind as a possessive", at, "the At's pod", true, "the Redis's pod"},
		{"an article that changes to an", memcached, "rename this Memcached, a Memcached", true, "rename this Index, an Index"},
		{"a workload in prose", memcached, "the memcached pods", true, "the memcached pods"},
		{"a resource in prose", memcached, "patch on memcacheds", true, "patch on indexes"},
		{"a kind that is neither English nor a workload, in prose", keyval, "the keyval servers", true, "the ledger servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.text(tc.in, tc.prose); got != tc.want {
				t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRenameChangesTheKindOpeningAWrappedLineOfYAML(t *testing.T) {
	r := &renamer{oldKind: newWord("Keyval", "keyvals"), newKind: newWord("Ledger", "ledgers")}
	in := "description: |-\n  Delete deletes them, and the\n  Keyval is gone only once they are.\n"
	want := "description: |-\n  Delete deletes them, and the\n  Ledger is gone only once they are.\n"
	if got := r.yaml(in); got != want {
		t.Errorf("yaml(%q) = %q, want %q", in, got, want)
	}
}

// In an identifier, the kind is renamed as its first camel-case word of its own.
func TestCamelRenamesTheKindOnceInAnIdentifier(t *testing.T) {
	r := &renamer{oldKind: newWord("At", "ats"), newKind: newWord("Redis", "redises")}
	for in, want := range map[string]string{
		"AtList": "RedisList", "TestDeletingAnAtGarbageCollectsItsPod": "TestDeletingARedisGarbageCollectsItsPod",
		"TestConvergedAtsMakeNoWrites": "TestConvergedRedisesMakeNoWrites", "Attach": "Attach",
		"TestAtRunsItsCommandAtOnce": "TestRedisRunsItsCommandAtOnce",
	} {
		if got := r.camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}

// A copy's kind is not listed with the examples, and takes no short name that the
// template's CRD, in the same cluster, may hold.
func TestRenameDropsTheExamplesCategoryAndTheShortName(t *testing.T) {
	r := &renamer{oldKind: newWord("Keyval", "keyvals"), newKind: newWord("Ledger", "ledgers")}
	for _, tc := range []struct{ name, in, want string }{
		{"a short name and the category", "shortName=kv,categories=reconcilekit-examples", "path=ledgers"},
		{"the category alone", "categories=reconcilekit-examples", "path=ledgers"},
		{"a category of the operator's own", "categories=reconcilekit-examples;stores,scope=Namespaced", "path=ledgers,categories=stores,scope=Namespaced"},
		{"a pinned plural", "path=keyvals,categories=reconcilekit-examples", "path=keyvals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.resourceMarker(tc.in); got != tc.want {
				t.Errorf("resourceMarker(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}

	crd := "  names:\n    categories:\n    - reconcilekit-examples\n    kind: Keyval\n    shortNames:\n    - kv\n    singular: keyval\n"
	want := "  names:\n    kind: Keyval\n    singular: keyval\n"
	if got := crdNames(crd); got != want {
		t.Errorf("crdNames(%q) = %q, want %q", crd, got, want)
	}
}

// A comment names the template's identifiers by their new names.
func TestRenameChangesTheIdentifiersInAComment(t *testing.T) {
	r := &renamer{oldKind: newWord("PodSet", "podsets"), newKind: newWord("Fleet", "fleets"), idents: map[string]string{
		"podSets": "fleets", "TestPodSetScales": "TestFleetScales", "PodSet": "Fleet", "podset": "fleet",
	}}
	in := " podSets is the table of TestPodSetScales; a PodSet, a podset"
	want := " fleets is the table of TestFleetScales; a PodSet, a podset"
	if got := r.commentIdents(in); got != want {
		t.Errorf("commentIdents(%q) = %q, want %q", in, got, want)
	}
}
