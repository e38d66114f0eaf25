package webhook

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaulter sets the defaults of an object of kind T as it is created or updated, before
// it is validated and stored. It changes obj in place; what it changes reaches the API
// server as a patch. An error rejects the request.
type Defaulter[T client.Object] interface {
	Default(ctx context.Context, obj T) error
}

// DefaulterFunc is a function that is a Defaulter.
type DefaulterFunc[T client.Object] func(ctx context.Context, obj T) error

// Default calls f.
func (f DefaulterFunc[T]) Default(ctx context.Context, obj T) error { return f(ctx, obj) }

// Validator checks an object of kind T as it is created (old is nil) or updated (old is
// the object before), after defaulting. Its warnings reach the client (kubectl prints
// them) whether or not it accepts the object. An error rejects the request: a
// *field.Error, or several joined by field.ErrorList.ToAggregate, answers 422 Invalid
// naming each field, as the API server's own validation does; an APIStatus error is
// answered as it is; any other error answers 403 Forbidden with its message.
// Deletions are not validated.
type Validator[T client.Object] interface {
	Validate(ctx context.Context, obj, old T) (warnings []string, err error)
}

// ValidatorFunc is a function that is a Validator.
type ValidatorFunc[T client.Object] func(ctx context.Context, obj, old T) ([]string, error)

// Validate calls f.
func (f ValidatorFunc[T]) Validate(ctx context.Context, obj, old T) ([]string, error) {
	return f(ctx, obj, old)
}

// Type is what a webhook does.
type Type string

// The types of webhook.
const (
	Defaulting Type = "Defaulting" // a mutating admission webhook (Defaulter)
	Validating Type = "Validating" // a validating admission webhook (Validator)
	Converting Type = "Converting" // a CRD conversion webhook (reconcile.WithConversion)
)

// Endpoint is one webhook a manager serves: what a MutatingWebhookConfiguration,
// ValidatingWebhookConfiguration or a CRD's conversion must name.
type Endpoint struct {
	// Type is what the webhook does.
	Type Type
	// Path is where the webhook server serves it: /mutate-<group>-<version>-<kind> and
	// /validate-<group>-<version>-<kind>, the group's dots as dashes and the kind in lower
	// case, as controller-gen's +kubebuilder:webhook markers name them; /convert for every
	// conversion.
	Path string
	// Kind is the object the webhook is for; the hub for a conversion.
	Kind schema.GroupVersionKind
}

// Path returns where a webhook of type t for kind gvk is served. It panics on a Type not
// declared here.
func Path(t Type, gvk schema.GroupVersionKind) string {
	name := strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
	switch t {
	case Defaulting:
		return "/mutate-" + name
	case Validating:
		return "/validate-" + name
	case Converting:
		return "/convert"
	}
	panic(fmt.Sprintf("webhook: no such type %q", t))
}
