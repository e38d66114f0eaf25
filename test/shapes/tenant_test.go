package shapes_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Shape (b): a cluster-scoped owner that makes a namespace and children in it, and whose
// finalizer waits while claims are left there.

const tenantFinalizer = "shapes.example.com/claims"

// claimsPoll is how often a deleted tenant's namespace is looked at for claims.
const claimsPoll = 2 * time.Second

// homeOf is the namespace a tenant makes.
func homeOf(name string) string { return "tenant-" + name }

func tenants() *reconcile.Controller[*Tenant] {
	return reconcile.For(&Tenant{}, reconcile.LogicFunc[*Tenant](provision), "tenant-operator",
		reconcile.WithChildren(&corev1.Namespace{}, &corev1.ResourceQuota{})).
		WithFinalizer(tenantFinalizer, awaitClaims)
}

// provision makes the tenant's namespace and its quota.
func provision(ctx context.Context, t *Tenant, s reconcile.Scope) requeue.Outcome {
	pods, err := resource.ParseQuantity(t.Spec.Pods)
	if err != nil {
		return requeue.Terminal(fmt.Errorf("spec.pods %q is not a quantity: %w", t.Spec.Pods, err))
	}
	home := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: homeOf(t.Name)}}
	if _, _, err := ownership.Ensure(ctx, s.Writer, t, home); err != nil {
		return requeue.Retry(err)
	}
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: home.Name, Name: "quota"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: pods}},
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, t, quota); err != nil {
		return requeue.Retry(err)
	}
	return requeue.Done() // the shell marks it Ready
}

// awaitClaims holds a deleted tenant while its namespace has claims: the data is theirs.
// The garbage collector deletes the namespace and the quota once the tenant is gone.
func awaitClaims(ctx context.Context, t *Tenant, s reconcile.Scope) requeue.Outcome {
	var claims corev1.PersistentVolumeClaimList
	if err := s.APIReader.List(ctx, &claims, client.InNamespace(homeOf(t.Name))); err != nil {
		return requeue.Retry(err)
	}
	if len(claims.Items) == 0 {
		return requeue.Done()
	}
	var names []string
	for _, c := range claims.Items {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	// The shell writes it while the tenant is deleted: kstatus and explain say why.
	conditions.MarkTrue(t, conditions.Stalled, "ClaimsLeft", "namespace %s still holds claims %s", homeOf(t.Name), strings.Join(names, ", "))
	// A person moves the data away: no event of the tenant's tells the operator, which
	// looks again.
	return requeue.After(claimsPoll)
}

func tenant(name, pods string) *Tenant {
	return &Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: TenantSpec{Pods: pods}}
}

func ownedByTenant(name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: version.String(), Kind: "Tenant", Name: name, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

func claim(namespace string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

func TestTenantTable(t *testing.T) {
	// The tenant is named after the case's namespace, so that its own is new to each case.
	name := reconciletest.CaseNamespace
	home := homeOf(name)
	homeNamespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: home, OwnerReferences: ownedByTenant(name)}}
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: home, Name: "quota", OwnerReferences: ownedByTenant(name)},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}},
	}
	held := tenant(name, "10")
	held.Finalizers = []string{tenantFinalizer}
	reconciletest.ReconcilerTests{
		ControlPlane: operator.ControlPlane,
		AddToScheme:  addToScheme,
		Controller:   tenants(),
		Role:         operator.Role,
		User:         operator.User,
		Operator:     operator,
		Cases: []reconciletest.ReconcilerTestCase{{
			Name:         "a new tenant gets its namespace and quota",
			Object:       tenant(name, "10"),
			WantRequests: []string{"patch tenants", "create namespaces", "create resourcequotas", "patch tenants/status"},
			WantObjects:  []client.Object{homeNamespace, quota},
			WantStatus: Status{ObservedGeneration: 1, Conditions: []metav1.Condition{{
				Type: conditions.Ready, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Reconciled",
				LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow),
			}}},
		}, {
			Name:         "a deleted tenant waits while its namespace has claims",
			Object:       held,
			Given:        []client.Object{homeNamespace, claim(home)},
			Meanwhile:    deleteTenant,
			WantRequests: []string{"patch tenants/status"},
			WantEvents:   []string{"Warning ClaimsLeft namespace " + home + " still holds claims data"},
			// The shell writes the Stalled the cleanup marks while the tenant is deleted.
			WantStatus: Status{ObservedGeneration: 2, Conditions: []metav1.Condition{
				{Type: conditions.Ready, Status: metav1.ConditionFalse, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow),
					Reason: "ClaimsLeft", Message: "namespace " + home + " still holds claims data"},
				{Type: conditions.Stalled, Status: metav1.ConditionTrue, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow),
					Reason: "ClaimsLeft", Message: "namespace " + home + " still holds claims data"},
			}},
			WantResult:  rtreconcile.Result{RequeueAfter: claimsPoll},
			WantObjects: []client.Object{claim(home)},
		}},
	}.Run(t)
}

// deleteTenant deletes the tenant named after the case's namespace ns.
func deleteTenant(ctx context.Context, c client.Client, ns string) error {
	return c.Delete(ctx, tenant(ns, ""))
}

func TestTenantOperator(t *testing.T) {
	e := operator.Env(t)
	home := homeOf(e.Namespace)
	e.Namespaces = []string{home}
	e.Run(t)
	if err := e.Create(t.Context(), tenant(e.Namespace, "10")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Delete(context.Background(), tenant(e.Namespace, "")) })
	reconciletest.Eventually(t, func(ctx context.Context) error {
		var got Tenant
		if err := e.Get(ctx, client.ObjectKey{Name: e.Namespace}, &got); err != nil {
			return err
		}
		if !conditions.IsTrue(&got, conditions.Ready) {
			return fmt.Errorf("not ready: %v", got.Status.Conditions)
		}
		return e.Get(ctx, client.ObjectKey{Namespace: home, Name: "quota"}, &corev1.ResourceQuota{})
	})
	if err := e.Create(t.Context(), claim(home)); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete(t.Context(), tenant(e.Namespace, "")); err != nil {
		t.Fatal(err)
	}
	// The tenant stays while the claim does, Stalled, saying why; once the claim is gone, so
	// is the tenant.
	awaitCondition(t, e, tenant(e.Namespace, ""), conditions.Stalled, metav1.ConditionTrue, "ClaimsLeft")
	releaseClaim(t, e, home)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		err := e.Get(ctx, client.ObjectKey{Name: e.Namespace}, &Tenant{})
		if err == nil {
			return fmt.Errorf("the tenant is still there")
		}
		return client.IgnoreNotFound(err)
	})
}

// releaseClaim deletes the claim of the namespace, and its protection finalizer, which no
// controller of an API server alone removes.
func releaseClaim(t *testing.T, e *reconciletest.Env, namespace string) {
	t.Helper()
	c := claim(namespace)
	if err := e.Delete(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(c), c); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	} else if err == nil && len(c.Finalizers) > 0 {
		c.Finalizers = nil
		if err := e.Update(t.Context(), c); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
}

func TestTenantExplored(t *testing.T) {
	if testing.Short() {
		t.Skip("explores")
	}
	tn := tenant(explore.Namespace, "10")
	rep := explore.Run(t, explore.Exploration{
		Operator:   operator,
		Namespaces: []string{homeOf(explore.Namespace)},
		Budget:     4,
		Workload: []explore.Step{
			explore.Create(tn),
			explore.Update("a bigger quota", tn, func(o client.Object) { o.(*Tenant).Spec.Pods = "20" }),
			explore.Delete(tn),
		},
	})
	if len(rep.Violations) > 0 {
		t.Errorf("violations: %v", rep.Violations)
	}
}
