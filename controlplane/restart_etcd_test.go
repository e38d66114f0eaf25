package controlplane_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/controlplane"
	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

func TestRestartEtcdKeepsTheDataAndTheAddress(t *testing.T) {
	fasttier.Skip(t)
	cp, c := start(t, controlplane.Options{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept"}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if err := cp.RestartEtcd(); err != nil {
		t.Fatal(err)
	}
	// The API server reconnects to etcd on its own; what it stored before is still there.
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("the ConfigMap created before etcd restarted: %v", last)
	}
}

// start starts a control plane as opts say, stopped when the test ends, and returns it
// with an administrator's client.
func start(t *testing.T, opts controlplane.Options) (*controlplane.ControlPlane, client.Client) {
	t.Helper()
	cp, err := controlplane.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cp, c
}
