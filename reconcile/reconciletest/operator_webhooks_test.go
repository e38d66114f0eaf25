package reconciletest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// gadgetRole is the ClusterRole of a Gadget operator that serves its webhooks with
// certificates of its own: the configurations' names are the Envs', so no resourceNames.
const gadgetRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups: [webhooks.reconcilekit.io]
  resources: [gadgets, gadgets/status]
  verbs: [get, list, watch, patch, update]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create, update]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [admissionregistration.k8s.io]
  resources: [mutatingwebhookconfigurations, validatingwebhookconfigurations]
  verbs: [get, update]
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [get, update]
`

// gadgetOperator starts an Operator of the Gadget on cp with the declarations given.
func gadgetOperator(t *testing.T, cp *reconciletest.ControlPlane, user string, controllers ...reconcile.Declaration) *reconciletest.Operator {
	t.Helper()
	role := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(role, []byte(gadgetRole), 0o600); err != nil {
		t.Fatal(err)
	}
	op := &reconciletest.Operator{User: user, AddToScheme: gadget.AddToScheme, Role: role, Controllers: controllers, ControlPlane: cp}
	if err := op.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := op.Stop(); err != nil {
			t.Error(err)
		}
	})
	return op
}

// validatedGadgets declares the Gadget's controller with a defaulter and a validator, and
// no conversion.
func validatedGadgets() reconcile.Declaration {
	return reconcile.For(&v1beta1.Gadget{},
		reconcile.LogicFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "gadget-operator",
	).
		WithDefaulter(webhook.DefaulterFunc[*v1beta1.Gadget](func(_ context.Context, g *v1beta1.Gadget) error {
			if g.Spec.Mode == "" {
				g.Spec.Mode = "standard"
			}
			return nil
		})).
		WithValidator(webhook.ValidatorFunc[*v1beta1.Gadget](func(_ context.Context, g, _ *v1beta1.Gadget) ([]string, error) {
			if g.Spec.Replicas > 5 {
				return nil, field.Invalid(field.NewPath("spec", "replicas"), g.Spec.Replicas, "at most 5")
			}
			return nil, nil
		}))
}

// webhookConfigurations returns the names of the webhook configurations of the cluster.
func webhookConfigurations(t *testing.T, c client.Client) []string {
	t.Helper()
	var names []string
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := c.List(context.Background(), mutating); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), validating); err != nil {
		t.Fatal(err)
	}
	for _, m := range mutating.Items {
		names = append(names, "mutating "+m.Name)
	}
	for _, v := range validating.Items {
		names = append(names, "validating "+v.Name)
	}
	return names
}

// An Env's Run serves the webhooks the operator declares, for its namespace alone, with no
// call of the test's: Envs of one operator run at once, each rejecting a bad create in its
// namespace by its own manager; an operator that declares none gets no configuration.
func TestEnvRunServesTheOperatorsDeclaredWebhooks(t *testing.T) {
	cp, scheme := gadgetAPIServer(t)
	admin := cp.Client(t, scheme)

	t.Run("validating", func(t *testing.T) {
		op := gadgetOperator(t, cp, "gadget-operator", validatedGadgets())
		for _, name := range []string{"one", "two"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := op.Env(t)
				start := time.Now()
				e.Run(t)
				t.Logf("Run returned, the API server calling its webhooks, in %v", time.Since(start).Round(time.Millisecond))

				bad := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "too-many"}, Spec: v1beta1.GadgetSpec{Replicas: 9}}
				err := e.Create(t.Context(), bad)
				if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas: Invalid value: 9: at most 5") {
					t.Fatalf("create: %v; want 422 Invalid naming spec.replicas", err)
				}
				good := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "defaulted"}, Spec: v1beta1.GadgetSpec{Replicas: 1}}
				if err := e.Create(t.Context(), good); err != nil {
					t.Fatal(err)
				}
				if good.Spec.Mode != "standard" {
					t.Errorf("spec.mode %q, want it defaulted to standard", good.Spec.Mode)
				}
				config := &admissionregistrationv1.ValidatingWebhookConfiguration{}
				if err := admin.Get(t.Context(), client.ObjectKey{Name: "reconciletest-" + e.Namespace}, config); err != nil {
					t.Fatalf("the Env's validating configuration: %v", err)
				}
				for _, w := range config.Webhooks {
					if got := w.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]; got != e.Namespace {
						t.Errorf("webhook %s selects namespace %q, want the Env's, %q", w.Name, got, e.Namespace)
					}
				}
			})
		}
	})
	if got := webhookConfigurations(t, admin); len(got) != 0 {
		t.Errorf("webhook configurations left after the tests: %v", got)
	}

	t.Run("restart", func(t *testing.T) {
		op := gadgetOperator(t, cp, "gadget-restarter", validatedGadgets())
		e := op.Env(t)
		e.Run(t).Stop()
		e.Run(t)
		bad := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "too-many"}, Spec: v1beta1.GadgetSpec{Replicas: 9}}
		if err := e.Create(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "spec.replicas") {
			t.Fatalf("create after a restart: %v; want 422 Invalid naming spec.replicas", err)
		}
	})

	t.Run("conversion", func(t *testing.T) {
		op := gadgetOperator(t, cp, "gadget-converter", gadgetController())
		e := op.Env(t)
		e.Run(t)
		stored := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "stored"}, Spec: v1beta1.GadgetSpec{Replicas: 3}}
		if err := e.Create(t.Context(), stored); err != nil {
			t.Fatal(err)
		}
		old := &v1alpha1.Gadget{}
		if err := e.Get(t.Context(), client.ObjectKeyFromObject(stored), old); err != nil {
			t.Fatal(err)
		}
		if old.Spec.Size != 3 {
			t.Errorf("v1alpha1 spec.size %d, want 3 converted from spec.replicas", old.Spec.Size)
		}
	})
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := admin.Get(t.Context(), client.ObjectKey{Name: gadget.CRD().Name}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("the CRD's conversion after the tests: %+v, want None", crd.Spec.Conversion)
	}

	t.Run("none declared", func(t *testing.T) {
		op := gadgetOperator(t, cp, "plain-gadget-operator", reconcile.For(&v1beta1.Gadget{},
			reconcile.LogicFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "gadget-operator"))
		e := op.Env(t)
		e.Run(t)
		if got := webhookConfigurations(t, admin); len(got) != 0 {
			t.Errorf("an operator without webhooks got webhook configurations: %v", got)
		}
		if err := e.Create(t.Context(), &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "unchecked"}, Spec: v1beta1.GadgetSpec{Replicas: 9}}); err != nil {
			t.Errorf("create with no webhook: %v", err)
		}
	})
}
