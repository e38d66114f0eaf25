package shapes_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
)

// table is the table of one shape's controller, on the operator's control plane, under
// its role, counted for its role check.
func table(d reconcile.Declaration, cases ...reconciletest.ReconcilerTestCase) reconciletest.ReconcilerTests {
	return reconciletest.ReconcilerTests{
		ControlPlane: operator.ControlPlane,
		AddToScheme:  addToScheme,
		Controller:   d,
		Role:         operator.Role,
		User:         operator.User,
		Operator:     operator,
		Cases:        cases,
	}
}

func TestSiteTable(t *testing.T) {
	cm := siteConfig("", "web", "nginx:1")
	cm.OwnerReferences = controlledBy("Site", "web")
	dep := siteDeployment("", "web", "nginx:1")
	dep.OwnerReferences = controlledBy("Site", "web")
	table(sites(), reconciletest.ReconcilerTestCase{
		Name:         "a new site gets its ConfigMap and Deployment",
		Object:       site("", "nginx:1"),
		WantRequests: []string{"create configmaps", "create deployments", "patch sites/status"},
		WantObjects:  []client.Object{cm, dep},
		// On an API server alone, no controller rolls the Deployment out.
		WantStatus: rollingOut(),
	}).Run(t)
}

func TestSiteOperator(t *testing.T) {
	e := operator.Env(t)
	e.Run(t)
	s := site(e.Namespace, "nginx:1")
	if err := e.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	// On an API server alone, no controller rolls the Deployment out.
	awaitCondition(t, e, s, conditions.Ready, metav1.ConditionFalse, "RollingOut")
	reconciletest.Eventually(t, func(ctx context.Context) error {
		return e.Get(ctx, client.ObjectKeyFromObject(siteConfig(e.Namespace, "web", "")), &corev1.ConfigMap{})
	})
}

func TestSiteExplored(t *testing.T) {
	s := site("", "nginx:1")
	explored(t, explore.Exploration{Workload: []explore.Step{
		explore.Create(s),
		explore.Update("a new image", s, func(o client.Object) { o.(*Site).Spec.Value = "nginx:2" }),
		explore.Delete(s),
	}})
}

func TestAccessTable(t *testing.T) {
	name := reconciletest.CaseNamespace
	role, binding := accessOf(name, "readers")
	role.OwnerReferences = controlledBy("Access", name)
	binding.OwnerReferences = controlledBy("Access", name)
	table(accesses(), reconciletest.ReconcilerTestCase{
		Name:         "a new access gets its role and binding",
		Object:       access(name, "readers"),
		WantRequests: []string{"create clusterroles", "create clusterrolebindings", "patch accesses/status"},
		WantObjects:  []client.Object{role, binding},
		WantStatus:   ready(),
	}).Run(t)
}

func TestAccessOperator(t *testing.T) {
	e := operator.Env(t)
	e.Run(t)
	a := access(e.Namespace, "readers")
	if err := e.Create(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Delete(context.Background(), access(e.Namespace, "")) })
	awaitReady(t, e, a)
	_, binding := accessOf(e.Namespace, "readers")
	reconciletest.Eventually(t, func(ctx context.Context) error {
		return e.Get(ctx, client.ObjectKeyFromObject(binding), binding)
	})
}

func TestAccessExplored(t *testing.T) {
	a := access(explore.Namespace, "readers")
	explored(t, explore.Exploration{Workload: []explore.Step{
		explore.Create(a),
		explore.Update("another group", a, func(o client.Object) { o.(*Access).Spec.Value = "writers" }),
		explore.Delete(a),
	}})
}

func TestBucketTable(t *testing.T) {
	held := bucket("")
	held.Finalizers = []string{bucketFinalizer}
	var namespaces []string
	table(buckets(), reconciletest.ReconcilerTestCase{
		Name:         "a new bucket is made outside the cluster",
		Object:       bucket(""),
		WantRequests: []string{"patch buckets", "patch buckets/status"},
		WantStatus:   ready(),
	}, reconciletest.ReconcilerTestCase{
		Name:   "a deleted bucket is deleted outside the cluster, then let go",
		Object: held,
		Meanwhile: func(ctx context.Context, c client.Client, ns string) error {
			namespaces = append(namespaces, ns)
			if out := send(ctx, "PUT", ns+".logs"); out.Err() != nil {
				return out.Err()
			}
			return c.Delete(ctx, bucket(ns))
		},
		WantRequests: []string{"patch buckets"},
	}).Run(t)
	t.Cleanup(func() { // once the cases, in parallel, have run
		for _, ns := range namespaces {
			if service.has(ns + ".logs") {
				t.Errorf("bucket %s.logs is still there", ns)
			}
		}
	})
}

func TestBucketOperator(t *testing.T) {
	e := operator.Env(t)
	e.Run(t)
	b := bucket(e.Namespace)
	if err := e.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	awaitReady(t, e, b)
	if !service.has(bucketName(b)) {
		t.Fatalf("bucket %s was not made", bucketName(b))
	}
	if err := e.Delete(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, e, b)
	if service.has(bucketName(b)) {
		t.Errorf("bucket %s outlived its object", bucketName(b))
	}
}

func TestBucketExplored(t *testing.T) {
	b := bucket("")
	explored(t, explore.Exploration{Workload: []explore.Step{
		explore.Create(b),
		explore.Update("a label", b, func(o client.Object) { o.SetLabels(map[string]string{"tier": "cold"}) }),
		explore.Delete(b),
	}})
}

func TestBatchTable(t *testing.T) {
	run := batchRun("nightly", "v1")
	run.OwnerReferences = controlledBy("Batch", "nightly")
	table(batches(), reconciletest.ReconcilerTestCase{
		Name:         "a new batch gets a run named by generateName",
		Object:       batch("", "v1"),
		WantRequests: []string{"create configmaps", "patch batches/status"},
		WantObjects:  []client.Object{run},
		WantStatus:   ready(),
	}).Run(t)
}

func TestBatchOperator(t *testing.T) {
	e := operator.Env(t)
	e.Run(t)
	b := batch(e.Namespace, "v1")
	if err := e.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	awaitReady(t, e, b)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		var runs corev1.ConfigMapList
		if err := e.List(ctx, &runs, client.InNamespace(e.Namespace), client.MatchingLabels{batchLabel: "nightly"}); err != nil {
			return err
		}
		if len(runs.Items) != 1 {
			return fmt.Errorf("%d runs, want 1", len(runs.Items))
		}
		return nil
	})
}

func TestBatchExplored(t *testing.T) {
	b := batch("", "v1")
	explored(t, explore.Exploration{Workload: []explore.Step{
		explore.Create(b),
		explore.Update("a new value", b, func(o client.Object) { o.(*Batch).Spec.Value = "v2" }),
		explore.Delete(b),
	}})
}

// rollingOut is the status of a Site whose Deployment no controller rolls out, in a table
// case.
func rollingOut() Status {
	at := metav1.NewTime(reconciletest.DefaultNow)
	waiting := "0 of 1 replicas available"
	return Status{ObservedGeneration: 1, Conditions: []metav1.Condition{
		{Type: conditions.Available, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: at, Reason: "AvailabilityNotReported",
			Message: "the Deployment controller has not reported availability (no Available condition); " + waiting},
		{Type: conditions.Progressing, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: at, Reason: "RollingOut", Message: waiting},
		{Type: conditions.Degraded, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: at, Reason: "RollingOut", Message: waiting},
		{Type: conditions.Ready, Status: metav1.ConditionFalse, ObservedGeneration: 1, LastTransitionTime: at, Reason: "RollingOut", Message: waiting},
		{Type: conditions.Reconciling, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: at, Reason: "RollingOut", Message: waiting},
	}}
}
