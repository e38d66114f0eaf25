package explain_test

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestExplainsACleanupThatCannotFinish(t *testing.T) {
	e := env(t, keyvalOperator)
	kv := &storev1alpha1.Keyval{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "sessions"},
		Spec: storev1alpha1.KeyvalSpec{Replicas: 1, Storage: storev1alpha1.KeyvalStorage{WhenDeleted: storev1alpha1.Delete}}}
	create(t, e, kv)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); err != nil {
			return err
		}
		if kv.Status.ObservedGeneration != kv.Generation || !conditions.IsTrue(kv, conditions.Ready) {
			return fmt.Errorf("the Keyval is not Ready yet")
		}
		return nil
	})

	// Someone else's policy keeps the claims of the namespace, which the Keyval's cleanup
	// deletes: the cleanup is refused, again and again.
	policy := keepClaims(t, e.Namespace)
	refused := fmt.Sprintf(`persistentvolumeclaims "data-sessions-0" is forbidden: ValidatingAdmissionPolicy '%s' with binding '%s' denied request: claims here are kept until they are backed up`, policy, policy)
	if err := e.Delete(t.Context(), kv); err != nil {
		t.Fatal(err)
	}

	// Before its deadline: being deleted, held by its finalizer, and the cleanup's error,
	// which the shell has written as Reconciling, reason Retrying.
	expect(t, e.Namespace, "keyval/sessions", func(context.Context) ([]string, error) {
		return []string{
			"Keyval sessions: Terminating (held by finalizer " + keyval.Finalizer + "; " + reconcile.ReasonRetrying + ": " + refused + ")",
			"  Warning ReconcileError on Keyval sessions: " + refused,
		}, nil
	})

	// Past it: Stalled says why, and the way out.
	overdue := fmt.Sprintf("cleanup has not succeeded within %s of the deletion (%s): fix its cause, or annotate %s=true to delete without cleanup",
		cleanupDeadline, refused, reconcile.SkipCleanupAnnotation)
	expect(t, e.Namespace, "keyval/sessions", func(context.Context) ([]string, error) {
		return []string{
			"Keyval sessions: Terminating (held by finalizer " + keyval.Finalizer + "; " + reconcile.ReasonCleanupOverdue + ": " + overdue + ")",
			"  Warning " + reconcile.ReasonCleanupOverdue + " on Keyval sessions: " + overdue,
		}, nil
	})

	// The way out it names lets the deletion go on.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, reconcile.SkipCleanupAnnotation)
	if err := e.Patch(t.Context(), kv, client.RawPatch(client.Merge.Type(), []byte(patch))); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Keyval is still there (%v)", err)
		}
		return nil
	})
}

// keepClaims installs, until the test ends, an admission policy that refuses the deletion
// of any claim of namespace, as a backup tool's might, and waits until the API server
// applies it. It returns the name of the policy and of its binding.
func keepClaims(t *testing.T, namespace string) string {
	t.Helper()
	c := cluster.Client(t, keyvalOperator.Scheme)
	name := "keep-claims" // one test at a time uses it
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"persistentvolumeclaims"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "claims here are kept until they are backed up"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: namespace},
			}},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
				t.Error(err)
			}
		})
	}
	// A policy applies once the API server has compiled it: a dry run says when.
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "data-sessions-0"}}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := c.Delete(ctx, claim, client.DryRunAll); !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
			return fmt.Errorf("deleting a claim is not refused yet (%v)", err)
		}
		return nil
	})
	return name
}
