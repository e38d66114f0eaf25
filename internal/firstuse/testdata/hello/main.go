// Hello uses each package of reconcilekit once, as a program that installed the module
// with go get would.
package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/workload"
)

func main() {
	var conds []metav1.Condition
	conditions.MarkTrue(conditions.List(&conds, 1), conditions.Ready, "Installed", "")

	logic := reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome {
		return requeue.After(time.Minute)
	})
	_ = reconcile.For(&corev1.ConfigMap{}, logic, "hello")

	dep := workload.Deployment("default", "hello", 1, corev1.PodTemplateSpec{})
	fmt.Println(conds[0].Type, conds[0].Status, logic.Reconcile(context.Background(), nil, reconcile.Scope{}), readiness.Deployment(dep).Rollout)
}
