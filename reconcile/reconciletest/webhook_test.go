package reconciletest

import (
	"encoding/json"
	"testing"
)

func TestWebhookPatchTurnsTheObjectIntoWhatMutateLeft(t *testing.T) {
	tests := []struct {
		name, before, after, want string
	}{
		{name: "nothing changed", before: `{"a":{"b":1}}`, after: `{"a":{"b":1}}`, want: `null`},
		{name: "a nested field replaced", before: `{"spec":{"x":1,"y":[1,2]}}`, after: `{"spec":{"x":2,"y":[1,2]}}`,
			want: `[{"op":"replace","path":"/spec/x","value":2}]`},
		{name: "a list replaced whole", before: `{"spec":{"args":["-m=64","-v"]}}`, after: `{"spec":{"args":["-m=32","-v"]}}`,
			want: `[{"op":"replace","path":"/spec/args","value":["-m=32","-v"]}]`},
		{name: "a key with a slash and a tilde added", before: `{"metadata":{"annotations":{}}}`, after: `{"metadata":{"annotations":{"example.com/a~b":"1"}}}`,
			want: `[{"op":"add","path":"/metadata/annotations/example.com~1a~0b","value":"1"}]`},
		{name: "a field removed", before: `{"a":1,"b":2}`, after: `{"a":1}`, want: `[{"op":"remove","path":"/b"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after map[string]any
			if err := json.Unmarshal([]byte(tt.before), &before); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.after), &after); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(diff("", before, after, nil))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("patch %s, want %s", got, tt.want)
			}
		})
	}
}
