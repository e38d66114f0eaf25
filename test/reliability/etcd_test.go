package reliability

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestOperatorsRecoverFromAnEtcdRestart(t *testing.T) {
	restartMidConvergence(t, "etcd", func() (time.Duration, error) {
		down := time.Now()
		if err := cp.RestartEtcd(); err != nil {
			return 0, err
		}
		downtime := time.Since(down)
		// The node simulator does not retry a pod's status it failed to write meanwhile, as a
		// kubelet would (reconciletest.RestartNodes).
		return downtime, cp.RestartNodes()
	})
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
