// Package statusfield finds the Go field that holds a Kubernetes object's status, for the
// reconcile shell, which writes it through the status subresource and leaves the rest to
// whoever wrote it, and for reconcile/reconciletest, which compares it. The API server
// knows the status by its JSON key, "status", not by a Go name: a kind may call the field
// anything (Observed `json:"status"`) or embed a shared status type.
package statusfield

import (
	"reflect"
	"strings"
)

// Of returns the field of the struct type t, or of the struct t points to, that holds the
// object's status: the one whose json tag names it "status" or, when no field's tag does,
// the field named Status whose tag gives it no other name, as the shell found the status
// before it read tags (a Go type without json tags, which only the fake client and the
// tests' own types serialise). Only t's own fields count: a status is a top-level field
// of an object.
func Of(t reflect.Type) (reflect.StructField, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	var untagged reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "status":
			return f, true
		case name == "" && f.Name == "Status":
			untagged, found = f, true
		}
	}
	return untagged, found
}
