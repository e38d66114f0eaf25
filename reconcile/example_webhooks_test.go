package reconcile_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// A controller declares the webhooks of its kind beside its logic: a defaulter, a
// validator whose warnings reach the client, and the conversion of its other versions to
// the hub it reconciles. The manager serves them at the paths the webhook configurations
// name, with a certificate it makes and rotates itself.
func ExampleManager_Webhooks() {
	controller := reconcile.For(&v1beta1.Gadget{},
		reconcile.LogicFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "gadget-operator",
	).
		WithDefaulter(webhook.DefaulterFunc[*v1beta1.Gadget](func(_ context.Context, g *v1beta1.Gadget) error {
			if g.Spec.Mode == "" {
				g.Spec.Mode = "standard"
			}
			return nil
		})).
		WithValidator(webhook.ValidatorFunc[*v1beta1.Gadget](func(_ context.Context, g, old *v1beta1.Gadget) ([]string, error) {
			var warnings []string
			if g.Spec.Mode == "legacy" {
				warnings = append(warnings, "spec.mode legacy is deprecated: use standard")
			}
			if g.Spec.Replicas > 5 {
				return warnings, field.Invalid(field.NewPath("spec", "replicas"), g.Spec.Replicas, "at most 5")
			}
			return warnings, nil
		})).
		// v1alpha1 to and from v1beta1, what v1alpha1 has no room for kept (webhook.Keep)
		WithConversion(gadget.Spoke())
	spec := reconcile.Manager{
		Options:     ctrl.Options{Scheme: withGadgetVersions},
		Controllers: []reconcile.Declaration{controller},
		Certificates: &webhook.Certificates{
			Secret:                          types.NamespacedName{Namespace: "gadget-system", Name: "gadget-webhook-certificates"},
			DNSNames:                        []string{"gadget-webhook.gadget-system.svc"},
			MutatingWebhookConfigurations:   []string{"gadget-mutating-webhook-configuration"},
			ValidatingWebhookConfigurations: []string{"gadget-validating-webhook-configuration"},
			CustomResourceDefinitions:       []string{"gadgets.webhooks.reconcilekit.io"},
		},
	}
	endpoints, err := spec.Webhooks() // what spec.New(cfg) serves
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range endpoints {
		fmt.Println(e.Type, e.Path)
	}
	// Output:
	// Defaulting /mutate-webhooks-reconcilekit-io-v1beta1-gadget
	// Validating /validate-webhooks-reconcilekit-io-v1beta1-gadget
	// Converting /convert
}
