package statusfield

import (
	"reflect"
	"testing"
)

type (
	shared struct{ Phase string }
	// The kinds: each a struct whose status field is named differently, or not at all.
	tagged struct {
		Spec     string `json:"spec"`
		Observed shared `json:"status,omitempty"`
	}
	untagged struct {
		Spec   string
		Status shared
	}
	optionsOnly struct {
		Status shared `json:",omitempty"`
	}
	embedded struct {
		Spec   string `json:"spec"`
		shared `json:"status"`
	}
	renamed struct {
		Status shared `json:"state"` // not the status: its JSON key is state
	}
	both struct {
		Status   shared // encoding/json calls it Status; the tagged one wins
		Observed shared `json:"status"`
	}
	ignored struct {
		Status shared `json:"-"`
	}
)

// The status is the field whose JSON key is status, and the field named Status only when
// no tag says otherwise.
func TestOfFindsTheFieldWhoseJSONKeyIsStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		of   any
		want string // the Go field's name, "" for none
	}{
		{"a field of another name tagged status", &tagged{}, "Observed"},
		{"a field named Status without a tag", &untagged{}, "Status"},
		{"a field named Status whose tag names nothing", optionsOnly{}, "Status"},
		{"an embedded status type tagged status", &embedded{}, "shared"},
		{"a field named Status tagged with another key", &renamed{}, ""},
		{"a tagged field beside one named Status", &both{}, "Observed"},
		{"a field named Status the JSON leaves out", &ignored{}, ""},
		{"not a struct", new(int), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := Of(reflect.TypeOf(tc.of))
			if got := f.Name; ok != (tc.want != "") || got != tc.want {
				t.Errorf("Of(%T) = %q, %v; want %q", tc.of, got, ok, tc.want)
			}
		})
	}
}
