package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// withGadgetVersions knows both versions of the Gadget, Widgets and client-go's kinds.
var withGadgetVersions = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(widgetGVK.GroupVersion(), &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGVK.GroupVersion())
	if err := gadget.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

func gadgets(opts ...reconcile.Option) *reconcile.Controller[*v1beta1.Gadget] {
	return reconcile.For(&v1beta1.Gadget{},
		reconcile.LogicFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "gadget-operator", opts...)
}

// Each webhook mistake is refused when the manager is made, with a message that names the
// fix.
func TestAManagerRefusesWebhookMistakesNamingTheFix(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec reconcile.Manager
		want []string
	}{{
		name: "a conversion without a spoke for every other version",
		spec: reconcile.Manager{Options: ctrl.Options{Scheme: withGadgetVersions}, Controllers: []reconcile.Declaration{gadgets().WithConversion()}},
		want: []string{"v1alpha1", "give one spoke (conversion.NewSpokeConverter) for each version of Gadget", "other than the hub's, v1beta1"},
	}, {
		name: "certificates kept in no Secret",
		spec: reconcile.Manager{Options: ctrl.Options{Scheme: withGadgetVersions}, Controllers: []reconcile.Declaration{gadgets()},
			Certificates: &webhook.Certificates{DNSNames: []string{"gadgets.system.svc"}}},
		want: []string{"Certificates.Secret names no Secret"},
	}, {
		name: "certificates for no name",
		spec: reconcile.Manager{Options: ctrl.Options{Scheme: withGadgetVersions}, Controllers: []reconcile.Declaration{gadgets()},
			Certificates: &webhook.Certificates{Secret: types.NamespacedName{Namespace: "system", Name: "certs"}}},
		want: []string{"give the webhook Service's <service>.<namespace>.svc"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec.Options.Scheme == nil {
				spec.Options.Scheme = withBuiltins
			}
			spec.Options.Metrics = metricsserver.Options{BindAddress: "0"}
			spec.Options.Controller = config.Controller{SkipNameValidation: new(true)}
			_, err := spec.New(cp(t).Config)
			if err == nil {
				t.Fatal("the manager was made")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error %q does not say %q", err, want)
				}
			}
		})
	}
}

// A validator's field errors are answered as the API server's own validation answers,
// and its other errors as they are.
func TestValidatorErrorsNameTheirFields(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		wantInvalid bool
		want        string
	}{
		{name: "one field error", err: field.Invalid(field.NewPath("spec", "replicas"), 9, "at most 5"), wantInvalid: true,
			want: `Gadget.webhooks.reconcilekit.io "g" is invalid: spec.replicas: Invalid value: 9: at most 5`},
		{name: "several field errors", err: field.ErrorList{field.Required(field.NewPath("spec", "mode"), ""), field.Invalid(field.NewPath("spec", "replicas"), 9, "at most 5")}.ToAggregate(),
			wantInvalid: true, want: `[spec.mode: Required value, spec.replicas: Invalid value: 9: at most 5]`},
		{name: "another error", err: fmt.Errorf("the registry is down"), want: "the registry is down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := reconcile.ValidatorError(&v1beta1.Gadget{}, "g", tc.err)
			if got := isInvalid(err); got != tc.wantInvalid {
				t.Errorf("Invalid %v, want %v: %v", got, tc.wantInvalid, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q does not say %q", err, tc.want)
			}
		})
	}
}

func TestManagerWebhooksListsTheDeclaredWebhooksAtTheMarkersPaths(t *testing.T) {
	spec := reconcile.Manager{Options: ctrl.Options{Scheme: withGadgetVersions}, Controllers: []reconcile.Declaration{gadgets().
		WithDefaulter(webhook.DefaulterFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget) error { return nil })).
		WithValidator(webhook.ValidatorFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, *v1beta1.Gadget) ([]string, error) { return nil, nil })).
		WithConversion(gadget.Spoke()),
	}}
	endpoints, err := spec.Webhooks()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range endpoints {
		got = append(got, fmt.Sprintf("%s %s %s", e.Type, e.Path, e.Kind.Kind))
	}
	want := "Defaulting /mutate-webhooks-reconcilekit-io-v1beta1-gadget Gadget, Validating /validate-webhooks-reconcilekit-io-v1beta1-gadget Gadget, Converting /convert Gadget"
	if strings.Join(got, ", ") != want {
		t.Errorf("webhooks %s, want %s", strings.Join(got, ", "), want)
	}
}

func isInvalid(err error) bool { return apierrors.IsInvalid(err) }
