package writerpolicy

import (
	"strings"
	"testing"
)

// writer stands for ownership.Writer, which this package cannot import.
type writer struct{ policy *Policy }

// Bind calls the binder registered for the Writer's type and returns the Writer typed as it
// was given; a Writer of a type no binder was registered for is a mistake it names.
func TestBindCallsTheBinderOfTheWritersType(t *testing.T) {
	Register(func(w writer, p *Policy) writer { w.policy = p; return w })
	p := &Policy{Declared: true}
	if got := Bind(writer{}, p); got.policy != p {
		t.Errorf("Bind(writer{}, p).policy = %p; want %p", got.policy, p)
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "no binder of string") {
			t.Errorf("Bind of a type without a binder: recovered %q; want a panic naming the type", msg)
		}
	}()
	Bind("not a writer", p)
}
