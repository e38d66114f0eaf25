package controller_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	tenancyv1alpha1 "example.com/acme/tenant-operator/api/v1alpha1"
	"example.com/acme/tenant-operator/controller"
	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The Tenant controller's logic, one reconcile at a time on an API server alone. Each
// case's Tenant is named after the case's namespace, so that the namespace it makes,
// tenant-{namespace}, is new to the case.
func TestTenantTable(t *testing.T) {
	held := object(2)
	held.Finalizers = []string{controller.Finalizer}
	table := reconciletest.ReconcilerTests{
		CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
		AddToScheme:    tenancyv1alpha1.AddToScheme,
		Controller:     controller.New(),
	}
	table.Cases = []reconciletest.ReconcilerTestCase{{
		Name:         "a new Tenant gets its namespace, and a quota and a binding there",
		Object:       object(2),
		WantRequests: []string{"patch tenants", "create namespaces", "create resourcequotas", "create rolebindings", "patch tenants/status"},
		WantObjects:  []client.Object{owned(controller.Namespace(object(2))), owned(quota(2)), owned(controller.Binding(object(2)))},
		WantStatus: tenancyv1alpha1.TenantStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			condition(1, "Ready", "True", "Reconciled", ""),
		}},
	}, {
		Name:         "a deleted Tenant waits while its namespace holds claims, Stalled, naming them",
		Object:       held,
		Given:        []client.Object{claim()},
		Meanwhile:    deleteTenant,
		WantRequests: []string{"patch tenants/status"},
		WantObjects:  []client.Object{claim()},
		// The shell writes the Stalled the cleanup marks, while the Tenant is deleted.
		WantStatus: tenancyv1alpha1.TenantStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
			condition(2, "Ready", "False", controller.ReasonClaimsLeft, claimsLeft),
			condition(2, "Stalled", "True", controller.ReasonClaimsLeft, claimsLeft),
		}},
		WantEvents: []string{"Warning ClaimsLeft " + claimsLeft},
		WantResult: rtreconcile.Result{RequeueAfter: controller.ClaimsPoll},
	}}
	table.Run(t)
}

// The operator, run as its manager runs it: a Tenant becomes Ready with its namespace; once
// deleted, it stays, Stalled, while a claim is left there, and goes with the claim.
func TestTenantIsHeldByItsClaims(t *testing.T) {
	e := operator.Env(t)
	home := controller.NamespaceOf(e.Namespace)
	e.Namespaces = []string{home}
	e.Run(t)
	tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: e.Namespace}, Spec: tenancyv1alpha1.TenantSpec{Replicas: 2}}
	if err := e.Create(t.Context(), tn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Delete(context.Background(), tn) })
	awaitVerdict(t, e, tn, kstatus.CurrentStatus)

	c := claim()
	c.Namespace = home
	if err := e.Create(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete(t.Context(), tn); err != nil {
		t.Fatal(err)
	}
	// kstatus reads a deleted object as Terminating; its conditions say why it stays.
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(tn), tn); err != nil {
			return err
		}
		if s := conditions.Find(tn, conditions.Stalled); s == nil || s.Status != metav1.ConditionTrue || s.Reason != controller.ReasonClaimsLeft {
			return fmt.Errorf("Stalled is %+v; want True, reason %s", s, controller.ReasonClaimsLeft)
		}
		return nil
	})

	if err := e.Delete(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(tn), tn); err == nil {
			return fmt.Errorf("the Tenant is still there: %+v", tn.Status.Conditions)
		} else {
			return client.IgnoreNotFound(err)
		}
	})
}

// deleteTenant deletes the Tenant of the case whose namespace is ns.
func deleteTenant(ctx context.Context, c client.Client, ns string) error {
	return c.Delete(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: ns}})
}

// awaitVerdict waits until kstatus reads tn, at its latest generation, as want.
func awaitVerdict(t *testing.T, e *reconciletest.Env, tn *tenancyv1alpha1.Tenant, want kstatus.Status) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(tn), tn); err != nil {
			return err
		}
		if v := reconciletest.VerdictOf(t, operator.Scheme, tn); tn.Status.ObservedGeneration != tn.Generation || v.Status != want {
			return fmt.Errorf("generation %d, observed %d: %s; want %s", tn.Generation, tn.Status.ObservedGeneration, v, want)
		}
		return nil
	})
}

// home is the namespace the Tenant of a case makes.
var home = controller.NamespaceOf(reconciletest.CaseNamespace)

// What a deleted Tenant of a case says while the claim is left.
var claimsLeft = "namespace " + home + " still holds claims data"

// object is the Tenant the cases reconcile, named after the case's namespace.
func object(replicas int32) *tenancyv1alpha1.Tenant {
	return &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: reconciletest.CaseNamespace},
		Spec: tenancyv1alpha1.TenantSpec{Replicas: replicas}}
}

// quota is the quota the case's Tenant wants, as the test reads it.
func quota(pods int64) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: home, Name: "quota"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)}},
	}
}

// owned is obj controlled by the case's Tenant.
func owned[T client.Object](obj T) T {
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: tenancyv1alpha1.GroupVersion.String(), Kind: "Tenant",
		Name: reconciletest.CaseNamespace, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
	return obj
}

// claim is a claim in the case's Tenant's namespace.
func claim() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: home, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

// condition is a condition of generation gen that changed at the case's time.
func condition(gen int64, typ, status, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), ObservedGeneration: gen,
		LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow), Reason: reason, Message: message}
}
