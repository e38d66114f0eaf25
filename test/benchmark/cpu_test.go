package main

import (
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestTheAPIServersAndEtcdsCPUGrowWithTheRequestsServed(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cp := reconciletest.StartAPIServer(t, filepath.Join(root, "examples/memcached/config/crd/bases"))
	ns := cp.Namespace(t)
	before, err := controlPlaneCPU(cp)
	if err != nil {
		t.Fatal(err)
	}
	if before["kube-apiserver"] <= 0 || before["etcd"] <= 0 {
		t.Fatalf("controlPlaneCPU = %v for an API server and etcd that have started, want more than 0 each", before)
	}
	c := cp.Client(t, nil)
	for i := range 500 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("cpu-", i)}}
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	after, err := controlPlaneCPU(cp)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if after[name] <= before[name] {
			t.Errorf("the CPU time of %s went from %v to %v over 500 creates, want it to grow", name, before[name], after[name])
		}
	}
}
