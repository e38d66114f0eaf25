package controller_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestAMemcachedMovedToAnotherPortServesThereThroughItsService(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := e.create(t, "cache", 2)
	e.awaitAvailable(t, mc)

	before := mc.DeepCopy()
	mc.Spec.Server.Port = 11300
	if err := e.Patch(t.Context(), mc, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	dep := e.awaitAvailable(t, mc)
	if p := dep.Spec.Template.Spec.Containers[0].Ports; len(p) != 1 || p[0].ContainerPort != 11300 {
		t.Errorf("the pods declare ports %+v; want 11300 alone", p)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		svc := &corev1.Service{}
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), svc); err != nil {
			return err
		}
		if p := svc.Spec.Ports; len(p) != 1 || p[0].Port != 11300 {
			return fmt.Errorf("the Service's ports are %+v; want 11300 alone", p)
		}
		return nil
	})
}
