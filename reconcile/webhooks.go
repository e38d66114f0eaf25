package reconcile

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/reconcilekit/reconcilekit/webhook"
)

// WithDefaulter declares the defaulting webhook of the controller's kind: d sets the
// defaults of every object created or updated, which the manager's webhook server serves
// at webhook.Path(webhook.Defaulting, kind).
func (c *Controller[T]) WithDefaulter(d webhook.Defaulter[T]) *Controller[T] {
	e := c.clone()
	e.typed.defaulter = d
	return e
}

// WithValidator declares the validating webhook of the controller's kind: v checks every
// object created or updated, its warnings returned to the client, served at
// webhook.Path(webhook.Validating, kind).
func (c *Controller[T]) WithValidator(v webhook.Validator[T]) *Controller[T] {
	e := c.clone()
	e.typed.validator = v
	return e
}

// WithConversion declares the conversion of the controller's kind between its versions:
// the reconciled type T is the hub, the version the controller reads and the CRD stores,
// and each spoke (controller-runtime's conversion.NewSpokeConverter) converts one other
// version to and from it; webhook.Keep and webhook.Restore make that lossless. The
// manager's webhook server serves every conversion of its controllers at /convert.
// The declaration is refused unless there is a spoke for every other version of the kind
// in the manager's scheme, and none for a version it does not have.
func (c *Controller[T]) WithConversion(spokes ...conversion.SpokeConverter[T]) *Controller[T] {
	e := c.clone()
	e.typed.spokes, e.typed.converts = spokes, true
	return e
}

// served is what a controller's webhook server serves for it.
type served struct {
	endpoints []webhook.Endpoint
	handlers  map[string]http.Handler
	converter conversion.Converter // nil without conversion
	kind      schema.GroupKind
}

// webhooks returns the webhooks the declaration declares, or why they cannot be served.
func (c *Controller[T]) webhooks(scheme *runtime.Scheme) (served, error) {
	w := c.typed
	s := served{handlers: map[string]http.Handler{}}
	if w.defaulter == nil && w.validator == nil && !w.converts {
		return s, nil
	}
	gvk, err := apiutil.GVKForObject(c.object, scheme)
	if err != nil {
		return s, nil // check names the unknown kind
	}
	s.kind = gvk.GroupKind()
	add := func(t webhook.Type, h http.Handler) {
		e := webhook.Endpoint{Type: t, Path: webhook.Path(t, gvk), Kind: gvk}
		s.endpoints = append(s.endpoints, e)
		s.handlers[e.Path] = h
	}
	var errs []error
	if w.defaulter != nil {
		add(webhook.Defaulting, admission.WithDefaulter[T](scheme, w.defaulter))
	}
	if w.validator != nil {
		add(webhook.Validating, admission.WithValidator[T](scheme, validator[T]{v: w.validator, kind: gvk.GroupKind()}))
	}
	if w.converts {
		if s.converter, err = conversion.NewHubSpokeConverter(c.object, w.spokes...)(scheme); err != nil {
			errs = append(errs, fmt.Errorf("WithConversion: %w: give one spoke (conversion.NewSpokeConverter) for each version of %s in the manager's scheme other than the hub's, %s",
				err, gvk.Kind, gvk.Version))
		} else {
			add(webhook.Converting, nil)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return s, fmt.Errorf("reconcile: the %s controller: %w", c.kind(), err)
	}
	return s, nil
}

// validator makes a webhook.Validator a controller-runtime one, whose field errors
// answer 422 Invalid, naming the fields.
type validator[T client.Object] struct {
	v    webhook.Validator[T]
	kind schema.GroupKind
}

func (a validator[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	var none T
	warnings, err := a.v.Validate(ctx, obj, none)
	return warnings, a.invalid(obj, err)
}

func (a validator[T]) ValidateUpdate(ctx context.Context, old, obj T) (admission.Warnings, error) {
	warnings, err := a.v.Validate(ctx, obj, old)
	return warnings, a.invalid(obj, err)
}

func (a validator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// invalid returns err, as an Invalid status naming its fields if it is made of field
// errors.
func (a validator[T]) invalid(obj T, err error) error {
	if err == nil {
		return nil
	}
	var list field.ErrorList
	var agg utilerrors.Aggregate
	var one *field.Error
	switch {
	case errors.As(err, &agg):
		for _, e := range agg.Errors() {
			if !errors.As(e, &one) {
				return err
			}
			list = append(list, one)
		}
	case errors.As(err, &one):
		list = field.ErrorList{one}
	default:
		return err
	}
	return apierrors.NewInvalid(a.kind, obj.GetName(), list)
}

// Webhooks returns every webhook the manager New makes serves, from its declarations,
// to be named in the webhook configurations and CRDs: what a test registers with its API
// server (reconciletest) and what the manifests must match. It refuses what New refuses
// of webhooks.
func (m Manager) Webhooks() ([]webhook.Endpoint, error) {
	scheme := m.Options.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	all, err := m.webhooks(scheme)
	var out []webhook.Endpoint
	for _, s := range all {
		out = append(out, s.endpoints...)
	}
	return out, err
}

func (m Manager) webhooks(scheme *runtime.Scheme) ([]served, error) {
	var all []served
	var errs []error
	for _, d := range m.Controllers {
		s, err := d.webhooks(scheme)
		errs = append(errs, err)
		all = append(all, s)
	}
	return all, errors.Join(errs...)
}

// serveWebhooks registers the declared webhooks on mgr's webhook server; a manager
// without any is left without a webhook server.
func serveWebhooks(srv ctrlwebhook.Server, scheme *runtime.Scheme, all []served) error {
	registry := conversion.NewRegistry()
	converts := false
	for _, s := range all {
		for path, h := range s.handlers {
			if h != nil {
				srv.Register(path, h)
			}
		}
		if s.converter != nil {
			converts = true
			if err := registry.RegisterConverter(s.kind, s.converter); err != nil {
				return fmt.Errorf("reconcile: %w", err)
			}
		}
	}
	if converts {
		srv.Register(webhook.Path(webhook.Converting, schema.GroupVersionKind{}), conversion.NewWebhookHandler(scheme, registry))
	}
	return nil
}

// serveWith makes the webhook server of opts serve certs' certificate: the one it is
// given, or a new one.
func serveWith(opts *ctrl.Options, certs *webhook.Certificates) error {
	getCertificate := func(c *tls.Config) { c.GetCertificate = certs.GetCertificate }
	switch srv := opts.WebhookServer.(type) {
	case nil:
		opts.WebhookServer = ctrlwebhook.NewServer(ctrlwebhook.Options{TLSOpts: []func(*tls.Config){getCertificate}})
	case *ctrlwebhook.DefaultServer:
		srv.Options.TLSOpts = append(srv.Options.TLSOpts, getCertificate)
	default:
		return fmt.Errorf("reconcile: Manager.Certificates serves through a webhook.DefaultServer; Options.WebhookServer is a %T: leave it nil, or make it with webhook.NewServer", srv)
	}
	return nil
}
