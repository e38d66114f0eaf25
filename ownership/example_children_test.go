package ownership_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// An owner whose spec no longer asks for a Service deletes the one it made, and only that one.
func ExampleDelete() {
	var (
		ctx   context.Context
		w     ownership.Writer // scope.Writer
		owner client.Object    // the object being reconciled
	)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: owner.GetName()}}
	result, err := ownership.Delete(ctx, w, owner, svc)
	switch {
	case ownership.IsNotControlled(err):
		return // someone else's Service: report it, never delete it
	case err != nil:
		return // requeue.Retry(err)
	}
	if result.Action == ownership.Deleted {
		fmt.Println("deleted the Service")
	}
}

// One ConfigMap per shard: growing the set creates, shrinking it deletes the shards that go.
func ExampleEnsureSet() {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cart", UID: "6b1d"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(owner).Build() // mgr.GetClient()
	w := ownership.Writer{Client: c, FieldOwner: "shop-operator"}                     // scope.Writer

	shards := func(n int) []*corev1.ConfigMap {
		var out []*corev1.ConfigMap
		for i := range n {
			out = append(out, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: fmt.Sprintf("cart-shard-%d", i)},
				Data:       map[string]string{"shard": fmt.Sprint(i)},
			})
		}
		return out
	}
	set := map[string]string{"example.com/shards-of": owner.Name}
	for _, n := range []int{3, 1, 1} {
		result, err := ownership.EnsureSet(ctx, w, owner, &corev1.ConfigMapList{}, set, shards(n))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("created %v, deleted %v, changed %v\n", result.Created, result.Deleted, result.Changed())
	}
	// Output:
	// created [cart-shard-0 cart-shard-1 cart-shard-2], deleted [], changed true
	// created [], deleted [cart-shard-1 cart-shard-2], changed true
	// created [], deleted [], changed false
}

// The pod template carries a hash of the configuration its pods read: Ensure rolls the
// Deployment when the data changes, and not when only the ConfigMap's metadata does.
func ExampleSetConfigHash() {
	settings := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "memcached-args", ResourceVersion: "41"},
		Data:       map[string]string{"memory": "64"},
	}
	var template corev1.PodTemplateSpec
	_ = ownership.SetConfigHash(&template, settings)
	before := template.Annotations[ownership.ConfigHashAnnotation]

	settings.ResourceVersion, settings.Labels = "42", map[string]string{"team": "cache"}
	_ = ownership.SetConfigHash(&template, settings)
	fmt.Println("metadata changed, same hash:", template.Annotations[ownership.ConfigHashAnnotation] == before)

	settings.Data["memory"] = "128"
	_ = ownership.SetConfigHash(&template, settings)
	fmt.Println("data changed, same hash:", template.Annotations[ownership.ConfigHashAnnotation] == before)
	// Output:
	// metadata changed, same hash: true
	// data changed, same hash: false
}
