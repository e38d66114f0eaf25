package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// The cluster serves a namespace that enforces restricted Pod Security through the
// kubeconfig whose export line it prints, until it is interrupted; then it stops, and the
// kubeconfig is gone.
func TestClusterServesARestrictedNamespaceUntilInterrupted(t *testing.T) {
	fasttier.Skip(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, options{nodes: 1, namespace: "dev", kubeconfig: kubeconfig}, out) }()

	deadline := time.After(3 * time.Minute)
	for !strings.Contains(out.String(), "export KUBECONFIG="+kubeconfig+"\n") {
		select {
		case err := <-done:
			t.Fatalf("the cluster ended before it said how to use it: %v\n%s", err, out)
		case <-deadline:
			t.Fatalf("no export line after 3 minutes:\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	loaded, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(loaded, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ns corev1.Namespace
	if err := c.Get(t.Context(), client.ObjectKey{Name: "dev"}, &ns); err != nil {
		t.Fatal(err)
	}
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("namespace dev enforces %q; want restricted", got)
	}

	interrupt()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopping: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("still running 2 minutes after the interrupt")
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("the kubeconfig is still there (%v)", err)
	}
	if !strings.Contains(out.String(), "Stopped") {
		t.Errorf("it did not say it stopped:\n%s", out)
	}
}

// syncBuffer is a buffer that the cluster writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
