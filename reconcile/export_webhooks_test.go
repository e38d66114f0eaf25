package reconcile

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ValidatorError is what a validator's err becomes in the answer to the API server, for
// an object of obj's kind named name (in the webhooks.reconcilekit.io group).
func ValidatorError[T client.Object](obj T, name string, err error) error {
	obj.SetName(name)
	return validator[T]{kind: schema.GroupKind{Group: "webhooks.reconcilekit.io", Kind: "Gadget"}}.invalid(obj, err)
}
