package controller_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	starterv1alpha1 "github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/cmd/newoperator/minimal-cluster/controller"
	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// The Widget controller's logic, one reconcile at a time on an API server alone: no
// manager, no StatefulSet controller. A case costs tens of milliseconds; add one for each
// thing the logic decides. A Widget is cluster-scoped: each case's is named after the
// case's namespace (CaseNamespace), so that the namespace it makes is new to the case.
func TestWidgetTable(t *testing.T) {
	table := reconciletest.ReconcilerTests{
		CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
		AddToScheme:    starterv1alpha1.AddToScheme,
		Controller:     controller.New(),
		Restricted:     true,
	}
	table.Cases = []reconciletest.ReconcilerTestCase{{
		Name:         "a new Widget gets a StatefulSet with a volume for each server",
		Object:       object(3),
		WantRequests: []string{"create namespaces", "create statefulsets", "patch widgets/status"},
		WantObjects:  []client.Object{ownedNamespace(), ownedStatefulSet(3)},
		WantStatus:   rollingOut(3),
	}, {
		Name:             "a converged Widget writes nothing",
		Object:           object(3),
		ReconciledBefore: 1,
		WantObjects:      []client.Object{ownedNamespace(), ownedStatefulSet(3)},
	}, {
		Name:   "a StatefulSet of its name that nobody owns is left alone, and the Widget says why",
		Object: object(3),
		// The namespace is given, as a StatefulSet needs one, by the test's field manager
		// rather than the operator's: the Widget's apply takes its fields over.
		Given:        []client.Object{ownedNamespace(), someoneElsesStatefulSet()},
		WantRequests: []string{"patch namespaces", "patch widgets/status"},
		WantObjects:  []client.Object{someoneElsesStatefulSet()},
		WantStatus: starterv1alpha1.WidgetStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			condition("Ready", "False", "StatefulSetNotOwned", notOwned),
			condition("Stalled", "True", "StatefulSetNotOwned", notOwned),
		}},
		WantEvents: []string{"Warning StatefulSetNotOwned " + notOwned},
		WantResult: rtreconcile.Result{RequeueAfter: time.Minute},
	}, {
		Name:         "a Widget whose name makes no namespace's name is reported Stalled, and makes nothing",
		Object:       &starterv1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: longName}, Spec: starterv1alpha1.WidgetSpec{Replicas: 1}},
		WantRequests: []string{"patch widgets/status"},
		WantStatus: starterv1alpha1.WidgetStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			condition("Ready", "False", controller.ReasonInvalidName, invalidName),
			condition("Stalled", "True", controller.ReasonInvalidName, invalidName),
		}},
		WantEvents: []string{"Warning InvalidName " + invalidName},
	}}
	table.Run(t)
}

// The operator, run as its manager runs it, on a cluster whose StatefulSet controller
// makes pods and whose claims bind: a Widget becomes Ready, as kubectl wait sees it.
func TestWidgetBecomesReadyWithAServerAndAVolumeForEachReplica(t *testing.T) {
	e, w := envWithWidget(t, 3)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		if w.Status.ObservedGeneration != w.Generation || !conditions.IsTrue(w, conditions.Ready) || w.Status.ReadyReplicas != 3 {
			return fmt.Errorf("not Ready: %d of 3 ready, %+v", w.Status.ReadyReplicas, w.Status.Conditions)
		}
		return nil
	})
	if v := reconciletest.VerdictOf(t, operator.Scheme, w); v.Status != kstatus.CurrentStatus || !v.Waited {
		t.Errorf("Ready, the verdict is %s; want Current, and kubectl wait returning", v)
	}
	var claims corev1.PersistentVolumeClaimList
	if err := e.List(t.Context(), &claims, client.InNamespace(controller.NamespaceOf(w.Name))); err != nil {
		t.Fatal(err)
	}
	bound := 0
	for _, c := range claims.Items {
		if c.Status.Phase == corev1.ClaimBound {
			bound++
		}
	}
	if bound != 3 {
		t.Errorf("%d of %d claims bound; want 3", bound, len(claims.Items))
	}
}

// A spec the schema refuses, stored past the API server (as an older schema or a direct
// write to etcd can leave it), is reported Stalled and not applied; a valid spec again, the
// Widget converges again.
func TestASpecItsSchemaRefusesIsReportedStalledAndNotApplied(t *testing.T) {
	e, w := envWithWidget(t, 2)
	awaitVerdict(t, e, w, kstatus.CurrentStatus)

	// Past the API server, whose schema would refuse it.
	e.StorePastSchema(t, w, func(spec map[string]any) { spec["replicas"] = int64(controller.MaxReplicas + 1) })
	awaitVerdict(t, e, w, kstatus.FailedStatus)
	if stalled := conditions.Find(w, conditions.Stalled); stalled == nil || stalled.Reason != controller.ReasonInvalidSpec {
		t.Errorf("Stalled is %+v; want reason %s", stalled, controller.ReasonInvalidSpec)
	}
	sts := &appsv1.StatefulSet{}
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(controller.StatefulSet(w)), sts); err != nil {
		t.Fatal(err)
	}
	if r := *sts.Spec.Replicas; r != 2 {
		t.Errorf("the StatefulSet has %d replicas; want the 2 of the last valid spec", r)
	}

	w.Spec.Replicas = 2
	if err := e.Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	awaitVerdict(t, e, w, kstatus.CurrentStatus)
}

// envWithWidget runs the operator, with its cache on the namespace a Widget named after the
// test's namespace makes, and creates that Widget, deleted when the test ends: a Widget is
// cluster-scoped, and the test's namespace's deletion does not take it.
func envWithWidget(t *testing.T, replicas int32) (*reconciletest.Env, *starterv1alpha1.Widget) {
	t.Helper()
	e := operator.Env(t)
	e.Namespaces = []string{controller.NamespaceOf(e.Namespace)}
	e.Run(t)
	w := &starterv1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: e.Namespace},
		Spec: starterv1alpha1.WidgetSpec{Replicas: replicas}}
	if err := e.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Delete(context.Background(), w) })
	return e, w
}

// awaitVerdict waits until kstatus reads w, at its latest generation, as want.
func awaitVerdict(t *testing.T, e *reconciletest.Env, w *starterv1alpha1.Widget, want kstatus.Status) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		if v := reconciletest.VerdictOf(t, operator.Scheme, w); w.Status.ObservedGeneration != w.Generation || v.Status != want {
			return fmt.Errorf("generation %d, observed %d: %s; want %s", w.Generation, w.Status.ObservedGeneration, v, want)
		}
		return nil
	})
}

// home is the namespace the Widget of a case makes.
var home = controller.NamespaceOf(reconciletest.CaseNamespace)

// What the Widget says when a StatefulSet of its name is not its own.
var notOwned = "StatefulSet " + home + "/" + reconciletest.CaseNamespace +
	" exists and has no controller; it is left alone: delete it or rename this Widget"

// longName is a Widget's name too long for the namespace it would make.
var longName = reconciletest.CaseNamespace + "-" + strings.Repeat("x", 60)

// What the Widget named longName says.
var invalidName = fmt.Sprintf("the namespace %s cannot be made (must be no more than 63 characters): "+
	"recreate this Widget under a name of at most %d lower-case letters, digits and dashes", controller.NamespaceOf(longName), 63-len(controller.NamespaceOf("")))

// object is the Widget the cases reconcile, named after the case's namespace.
func object(replicas int32) *starterv1alpha1.Widget {
	return &starterv1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: reconciletest.CaseNamespace},
		Spec: starterv1alpha1.WidgetSpec{Replicas: replicas}}
}

// condition is a condition of generation 1 that changed at the case's time.
func condition(typ, status, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), ObservedGeneration: 1,
		LastTransitionTime: metav1.NewTime(reconciletest.DefaultNow), Reason: reason, Message: message}
}

// rollingOut is the status of a Widget whose new StatefulSet the StatefulSet controller
// has not reported on yet.
func rollingOut(replicas int32) starterv1alpha1.WidgetStatus {
	counts := fmt.Sprintf("0 of %d replicas ready, %d to update", replicas, replicas)
	return starterv1alpha1.WidgetStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
		condition("Available", "False", "MinimumReplicasUnavailable",
			fmt.Sprintf("below minimum availability: 0 of %d replicas ready, %d needed (a majority)", replicas, replicas/2+1)),
		condition("Progressing", "True", "RollingOut", counts),
		condition("Degraded", "False", "RollingOut", counts),
		condition("Ready", "False", "RollingOut", counts),
		condition("Reconciling", "True", "RollingOut", counts),
	}}
}

// ownedByWidget are the owner references of what the case's Widget controls.
func ownedByWidget() []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: starterv1alpha1.GroupVersion.String(), Kind: "Widget", Name: reconciletest.CaseNamespace,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

// ownedNamespace is the namespace the Widget makes, controlled by it.
func ownedNamespace() *corev1.Namespace {
	n := controller.Namespace(object(1))
	n.OwnerReferences = ownedByWidget()
	return n
}

// ownedStatefulSet is the StatefulSet the Widget first wants, in its namespace, controlled
// by it.
func ownedStatefulSet(replicas int32) *appsv1.StatefulSet {
	s := controller.StatefulSet(object(replicas))
	s.OwnerReferences = ownedByWidget()
	return s
}

// someoneElsesStatefulSet is a StatefulSet of the Widget's name, in its namespace, that
// has no controller.
func someoneElsesStatefulSet() *appsv1.StatefulSet {
	return workload.StatefulSet(home, reconciletest.CaseNamespace, 1, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "someone-elses"}},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	})
}
