package webhook_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/webhook"
)

// Path is where a webhook is served, as controller-gen's markers name it.
func ExamplePath() {
	gvk := schema.GroupVersionKind{Group: "cache.example.com", Version: "v1beta1", Kind: "Memcached"}
	fmt.Println(webhook.Path(webhook.Defaulting, gvk))
	fmt.Println(webhook.Path(webhook.Validating, gvk))
	fmt.Println(webhook.Path(webhook.Converting, gvk))
	// Output:
	// /mutate-cache-example-com-v1beta1-memcached
	// /validate-cache-example-com-v1beta1-memcached
	// /convert
}

// Keep and Restore make a conversion lossless: what the spoke has no field for rides in
// an annotation of the spoke and comes back when it is converted to the hub again. Here
// the hub's minReadySeconds has no place in the spoke.
func ExampleKeep() {
	hub := &appsv1.Deployment{}
	hub.Name, hub.Spec.MinReadySeconds = "cache", 30

	// Hub to spoke: convert what the spoke has room for, then keep the hub.
	spoke := &appsv1.Deployment{}
	spoke.Name = hub.Name
	if err := webhook.Keep(hub, spoke); err != nil {
		fmt.Println(err)
		return
	}

	// Spoke to hub: convert back, then restore what the spoke had no room for.
	back := &appsv1.Deployment{}
	back.Name, back.Annotations = spoke.Name, spoke.Annotations
	if err := webhook.Restore(spoke, back, func(kept *appsv1.Deployment) {
		back.Spec.MinReadySeconds = kept.Spec.MinReadySeconds
	}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("minReadySeconds:", back.Spec.MinReadySeconds, "annotations left on the hub:", len(back.Annotations))
	// Output:
	// minReadySeconds: 30 annotations left on the hub: 0
}
