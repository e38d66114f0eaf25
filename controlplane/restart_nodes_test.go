package controlplane_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/controlplane"
	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

func TestRestartNodesAfterEtcdRunsEveryPodBoundBeforeDuringAndAfter(t *testing.T) {
	fasttier.Skip(t)
	cp, c := start(t, controlplane.Options{Nodes: 3})

	// Pods keep coming, a few a second, from before etcd restarts until after the nodes have.
	creating, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; creating.Err() == nil; i++ {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", i)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "memcached"}}},
			}
			// Creates fail while etcd is down; the pods that were made are what count.
			_ = c.Create(creating, pod)
			time.Sleep(200 * time.Millisecond)
		}
	})
	time.Sleep(2 * time.Second)
	if err := cp.RestartEtcd(); err != nil {
		t.Fatal(err)
	}
	if err := cp.RestartNodes(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	stop()
	wg.Wait()

	var notRunning []string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace("default")); err != nil {
			return false, nil
		}
		notRunning = nil
		for _, p := range list.Items {
			if p.Status.Phase != corev1.PodRunning {
				notRunning = append(notRunning, fmt.Sprintf("%s %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName))
			}
		}
		return len(list.Items) > 0 && len(notRunning) == 0, nil
	})
	if err != nil {
		t.Fatalf("pods not running: %v", notRunning)
	}
}
