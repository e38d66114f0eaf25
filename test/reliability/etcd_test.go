package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestOperatorsRecoverFromAnEtcdRestart(t *testing.T) {
	s := sized()
	admin := cp.Client(t, scheme)
	ns := cp.RestrictedNamespace(t)
	explainFailure(t, admin, ns)

	var created ledger
	var requests reconciletest.Counter
	for _, op := range operators {
		watchStatus(t, ns, op)
		op.start(t, requests.Wrap(created.wrap(op.config(t))), ns)
	}
	for _, op := range operators {
		op.create(t, admin, ns, op.name, s.objects)
	}
	// In the middle of convergence, as in the API server's restart.
	await(t, s.limit, func(context.Context) error {
		if n := requests.Writes(); n < s.objects {
			return fmt.Errorf("the operators have made %d writes", n)
		}
		return nil
	})
	pending := 0
	for _, op := range operators {
		p, err := op.unconverged(t.Context(), admin, ns)
		if err != nil {
			t.Fatal(err)
		}
		pending += len(p)
	}
	if pending == 0 {
		t.Fatal("every object converged before etcd could restart")
	}
	down := time.Now()
	if err := cp.RestartEtcd(); err != nil {
		t.Fatal(err)
	}
	downtime := time.Since(down)
	// The node simulator does not retry a pod's status it failed to write meanwhile, as a
	// kubelet would (reconciletest.RestartNodes).
	if err := cp.RestartNodes(); err != nil {
		t.Fatal(err)
	}
	await(t, s.limit, func(ctx context.Context) error { return converged(ctx, admin, ns, operators...) })
	pods := created.check(t)
	t.Logf("etcd was down for %v with %d of %d objects on their way; all converged, %d At pods created",
		downtime.Round(100*time.Millisecond), pending, 3*s.objects, pods)
}

// explainFailure logs, if the test fails, what the cluster holds in ns that an operator
// would need to converge: each Deployment's replicas and each pod's phase and node.
func explainFailure(t *testing.T, c client.Client, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		deployments, err := deploymentsIn(ctx, c, ns)
		if err != nil {
			t.Logf("listing the Deployments: %v", err)
		}
		for name, d := range deployments {
			if d.Status.AvailableReplicas != *d.Spec.Replicas {
				t.Logf("Deployment %s: generation %d observed %d, %d replicas, %d updated, %d ready, %d available", name,
					d.Generation, d.Status.ObservedGeneration, *d.Spec.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas)
			}
		}
		list, err := pods(ctx, c, ns)
		if err != nil {
			t.Logf("listing the pods: %v", err)
		}
		for _, p := range list {
			if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodSucceeded {
				t.Logf("pod %s: %s on node %q", p.Name, p.Status.Phase, p.Spec.NodeName)
			}
		}
	})
}
