package main

import (
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestAPIServerCPUGrowsWithTheRequestsItServes(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cp := reconciletest.StartAPIServer(t, filepath.Join(root, "examples/memcached/config/crd/bases"))
	ns := cp.Namespace(t)
	before, err := apiServerCPU(cp)
	if err != nil {
		t.Fatal(err)
	}
	if before <= 0 {
		t.Fatalf("apiServerCPU = %v for an API server that has started, want more than 0", before)
	}
	c := cp.Client(t, nil)
	for i := range 200 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("cpu-", i)}}
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	after, err := apiServerCPU(cp)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("apiServerCPU went from %v to %v over 200 creates, want it to grow", before, after)
	}
}
