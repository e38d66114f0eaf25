package explore_test

import (
	"fmt"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
)

// An exploration is an operator, started by its tests' TestMain (reconciletest.Operator's
// Main), and a workload that ends by deleting what it made. A test explores it with
// explore.Run(t, x), which fails t with the report of every run an oracle faults.
func Example() {
	operator := &reconciletest.Operator{
		User:           "shop-operator",
		AddToScheme:    addCorpus,
		CRDDirectories: []string{filepath.Join("testdata", "corpus", "crd")},
		Role:           filepath.Join("testdata", "corpus", "role.yaml"),
		Controllers:    []reconcile.Declaration{shopOf(daemons{}, reconcile.WithChildren(&appsv1.DaemonSet{}))},
	}
	shop := &Shop{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: ShopSpec{Tier: "gold"}}
	x := explore.Exploration{
		Operator: operator,
		Workload: []explore.Step{
			explore.Create(shop),
			explore.Update("tier silver", shop, func(o client.Object) { o.(*Shop).Spec.Tier = "silver" }),
			explore.Delete(shop),
		},
		// A short pass in the package's usual tests; make test-explore sets
		// -explore.all for every point.
		Budget: 6,
		// The operator stamps the time it last rotated a key in an annotation: two
		// reference runs a second apart may agree on it, so it is masked by name.
		Masks: []explore.Mask{{Kind: "Shop", Path: "metadata.annotations[example.com/rotated]", Why: "a clock's"}},
	}
	for _, s := range x.Workload {
		fmt.Println(s.Name)
	}
	// Output:
	// create Shop shop
	// update Shop shop: tier silver
	// delete Shop shop
}

// A violation reads as its run, its oracle and what it found; Report.Details adds the
// command that replays the run and the writes of both runs side by side.
func ExampleViolation_String() {
	v := explore.Violation{Run: "crash@7", Class: explore.Crash, Oracle: "created twice",
		Detail: "write 9 created configmaps shop-settings again, which write 4 had created"}
	fmt.Println(v)
	// Output:
	// crash@7 [created twice]: write 9 created configmaps shop-settings again, which write 4 had created
}
