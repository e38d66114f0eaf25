// Command finalizer declares a Memcached-like controller of ConfigMaps with the cleanup of
// another kind, Secrets: a mistake that does not compile.
package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
)

func logic(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome {
	return requeue.Done()
}

func release(context.Context, *corev1.Secret, reconcile.Scope) requeue.Outcome { return requeue.Done() }

func main() {
	_ = reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](logic), "copier").
		WithFinalizer("example.com/release", release)
}
