package shapes_test

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// Every shape on the local cluster (cmd/cluster's control plane: kube-controller-manager,
// kube-scheduler and a simulated node beside the API server): each object becomes Ready,
// the Site once kube-controller-manager has rolled its Deployment out on the node, which no
// API server alone does; and each deletion ends with nothing left, the children collected
// by the garbage collector (a cluster-scoped owner's ClusterRole and binding and its
// Namespace included), the Tenant's namespace emptied and removed by the namespace
// controller once its claim is gone, whose protection the claim's controller lifts.
func TestEveryShapeOnTheLocalCluster(t *testing.T) {
	cp := reconciletest.StartCluster(t, 1, filepath.Join("testdata", "crd"))
	o := &reconciletest.Operator{
		User: "shapes-on-a-cluster", AddToScheme: addToScheme, Role: filepath.Join("testdata", "role.yaml"),
		Controllers: operator.Controllers, ControlPlane: cp,
		Partial: true, // the role is checked against the tests on an API server alone
	}
	if err := o.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := o.Stop(); err != nil {
			t.Error(err)
		}
	})
	e := o.Env(t)
	ensureVault(t, e, vault)
	home := homeOf(e.Namespace)
	e.Namespaces = []string{home, vault}
	e.Run(t)

	owners := []client.Object{
		tenant(e.Namespace, "10"), site(e.Namespace, "nginx:1"), access(e.Namespace, "readers"),
		bucket(e.Namespace), batch(e.Namespace, "v1"), mirror(e.Namespace),
	}
	for _, obj := range owners {
		if err := e.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range owners {
		awaitReady(t, e, obj)
	}
	role, binding := accessOf(e.Namespace, "readers")
	children := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: home}},
		&corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: home, Name: "quota"}},
		siteDeployment(e.Namespace, "web", "nginx:1"), siteConfig(e.Namespace, "web", ""),
		role, binding, mirrorOf(vault, e.Namespace, "web", ""),
	}
	for _, c := range children {
		if err := e.Get(t.Context(), client.ObjectKeyFromObject(c), c); err != nil {
			t.Fatalf("%T %s: %v", c, c.GetName(), err)
		}
	}
	var runs corev1.ConfigMapList
	if err := e.List(t.Context(), &runs, client.InNamespace(e.Namespace), client.MatchingLabels{batchLabel: "nightly"}); err != nil || len(runs.Items) != 1 {
		t.Fatalf("the Batch's runs: %d (%v), want one", len(runs.Items), err)
	}
	children = append(children, &runs.Items[0])

	// A claim holds the Tenant, Stalled saying why, until it is deleted; then every owner
	// and child goes.
	if err := e.Create(t.Context(), claim(home)); err != nil {
		t.Fatal(err)
	}
	for _, obj := range owners {
		if err := e.Delete(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	awaitCondition(t, e, owners[0], conditions.Stalled, metav1.ConditionTrue, "ClaimsLeft")
	if err := e.Delete(t.Context(), claim(home)); err != nil {
		t.Fatal(err)
	}
	for _, obj := range append(owners, children...) {
		awaitGone(t, e, obj)
	}
	if service.has(bucketName(bucket(e.Namespace))) {
		t.Error("the Bucket's bucket outlived it")
	}
}
