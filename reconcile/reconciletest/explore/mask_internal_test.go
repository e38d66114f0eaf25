package explore

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestMaskPathsParseAsDocumented(t *testing.T) {
	for _, tc := range []struct {
		path string
		keys []string
		bad  bool
	}{
		{path: "data.password", keys: []string{"data", "password"}},
		{path: "metadata.labels[example.com/stamp]", keys: []string{"metadata", "labels", "example.com/stamp"}},
		{path: `metadata.labels["example.com/stamp"]`, keys: []string{"metadata", "labels", "example.com/stamp"}},
		{path: "spec.template.spec.containers[*].image", keys: []string{"spec", "template", "spec", "containers", "*", "image"}},
		{path: "spec.ports[0].nodePort", keys: []string{"spec", "ports", "0", "nodePort"}},
		{path: "data.*", keys: []string{"data", "*"}},
		{path: "", keys: nil},
		{path: "spec[", bad: true},
		{path: ".spec", bad: true},
		{path: "spec[]", bad: true},
	} {
		keys, err := parsePath(tc.path)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: parsed as %q, want an error", tc.path, keys)
			}
			continue
		}
		if err != nil || !slices.Equal(keys, tc.keys) {
			t.Errorf("%q: %q, %v; want %q", tc.path, keys, err, tc.keys)
		}
		if tc.path != "" && tc.path[0] != '"' {
			if again, _ := parsePath(formatPath(keys)); !slices.Equal(again, keys) {
				t.Errorf("%q formatted as %q reads back as %q", tc.path, formatPath(keys), again)
			}
		}
	}
}

func TestAMaskRemovesAMapKeyAndMasksAListElementOfTheObjectsItNames(t *testing.T) {
	s := state{
		"Secret shop-credentials": {"data": map[string]any{"password": "x1", "user": "shop"}},
		"Secret other":            {"data": map[string]any{"password": "x2"}},
		"Pod p":                   {"spec": map[string]any{"containers": []any{map[string]any{"image": "a"}, map[string]any{"image": "b"}}}},
		"Job j":                   {"metadata": map[string]any{"labels": map[string]any{"controller-uid": "u", "app": "j"}}},
	}
	mask(s, []Mask{
		{Kind: "Secret", Name: "shop-*", Path: "data.password"},
		{Kind: "Pod", Path: "spec.containers[*].image"},
		{Path: "metadata.labels[controller-uid]"},
	})
	list := state{"Pod p": {"spec": map[string]any{"args": []any{"a", "b"}}}}
	mask(list, []Mask{{Path: "spec.args[1]"}})
	if d := cmp.Diff(state{"Pod p": {"spec": map[string]any{"args": []any{"a", "<masked>"}}}}, list); d != "" {
		t.Errorf("a list's element:\n%s", d)
	}
	want := state{
		"Secret shop-credentials": {"data": map[string]any{"user": "shop"}},
		"Secret other":            {"data": map[string]any{"password": "x2"}},
		"Pod p":                   {"spec": map[string]any{"containers": []any{map[string]any{}, map[string]any{}}}},
		"Job j":                   {"metadata": map[string]any{"labels": map[string]any{"app": "j"}}},
	}
	if d := cmp.Diff(want, s); d != "" {
		t.Error(d)
	}
	mask(s, []Mask{{Kind: "Pod"}})
	if _, ok := s["Pod p"]; ok {
		t.Error("a mask with no path left its object in")
	}
}

func TestTwoReferenceRunsTeachTheFieldsAndObjectsThatDifferBetweenThem(t *testing.T) {
	a := []state{{
		"Secret shop-credentials":      {"data": map[string]any{"password": "x1", "user": "shop"}},
		"ConfigMap c":                  {"data": map[string]any{"k": "v"}},
		"ConfigMap backup-<generated>": {"data": map[string]any{"at": "1"}},
	}}
	b := []state{{
		"Secret shop-credentials":      {"data": map[string]any{"password": "x2", "user": "shop"}},
		"ConfigMap c":                  {"data": map[string]any{"k": "v"}},
		"ConfigMap backup-<generated>": {"data": map[string]any{"at": "2"}},
		"ConfigMap extra":              {},
	}}
	got := learnMasks(a, b)
	want := []Mask{
		{Kind: "ConfigMap", Name: "backup-<generated>*", Path: "data.at", Why: whyLearned},
		{Kind: "ConfigMap", Name: "extra", Why: whyLearned},
		{Kind: "Secret", Name: "shop-credentials", Path: "data.password", Why: whyLearned},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	if s := got[2].String(); s != "Secret shop-credentials data.password: differs between reference runs" {
		t.Errorf("the report says %q", s)
	}
	mask(a[0], got)
	mask(b[0], got)
	if d := cmp.Diff(a[0], b[0]); d != "" {
		t.Errorf("masked by what they taught, the states still differ:\n%s", d)
	}
}

func TestTheAPIServersUIDsAndTimestampsAreMaskedForEveryKind(t *testing.T) {
	job := func(uid, at string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"name": "init-abc", "namespace": "ns-1", "uid": uid,
				"labels":      map[string]any{"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid, "app": "init"},
				"annotations": map[string]any{"example.com/started": at}},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": uid}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid}}},
			},
		}}
	}
	norm := func(o *unstructured.Unstructured, ns string) state {
		s := normalise(map[string]*unstructured.Unstructured{"Job init-abc": o}, ns, nil)
		mask(s, ruleMasks)
		return s
	}
	a := norm(job("0b7e2c34-1111-4a5e-9f3a-000000000001", "2026-11-27T10:00:00Z"), "ns-1")
	b := norm(job("0b7e2c34-2222-4a5e-9f3a-000000000002", "2026-11-27T11:30:00Z"), "ns-1")
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("two Jobs alike but for what the API server assigned differ:\n%s", d)
	}
}

func TestAClassOfMorePointsThanItsCapIsSampledBySeed(t *testing.T) {
	points := make([]int, 2656)
	for i := range points {
		points[i] = i
	}
	a, b := sample(points, 24, "op/crash"), sample(points, 24, "op/crash")
	if len(a) != 24 || !slices.Equal(a, b) || !slices.IsSorted(a) {
		t.Errorf("sampled %v and %v", a, b)
	}
	if c := sample(points, 24, "op/fail"); slices.Equal(a, c) {
		t.Error("two classes drew the same sample")
	}
	if few := sample(points[:5], 24, "op/crash"); len(few) != 5 {
		t.Errorf("a class under its cap was sampled: %v", few)
	}
}
