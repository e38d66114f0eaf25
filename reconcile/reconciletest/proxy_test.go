package reconciletest_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestProxy(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	get := func(ctx context.Context, c client.Client) error {
		return c.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{})
	}
	for _, tc := range []struct {
		name string
		test func(t *testing.T, p *reconciletest.Proxy, c client.Client)
	}{{
		name: "forwards requests, the server's certificate checked as if there were no proxy",
		test: func(t *testing.T, p *reconciletest.Proxy, c client.Client) {
			if err := get(t.Context(), c); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "a partition holds every request until it heals, and then delivers it",
		test: func(t *testing.T, p *reconciletest.Proxy, c client.Client) {
			p.Partition()
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			if err := get(ctx, c); err == nil {
				t.Fatal("a request went through the partition")
			}
			done := make(chan error, 1)
			go func() { done <- get(t.Context(), c) }()
			time.Sleep(500 * time.Millisecond)
			p.Heal()
			if err := <-done; err != nil {
				t.Fatalf("after Heal: %v", err)
			}
		},
	}, {
		name: "latency delays every request by at least that much",
		test: func(t *testing.T, p *reconciletest.Proxy, c client.Client) {
			if err := get(t.Context(), c); err != nil { // connected before the delay
				t.Fatal(err)
			}
			p.SetLatency(300 * time.Millisecond)
			start := time.Now()
			if err := get(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < 300*time.Millisecond {
				t.Errorf("a request took %v through a latency of 300ms", took)
			}
		},
	}, {
		name: "cut connections are counted and the client connects again",
		test: func(t *testing.T, p *reconciletest.Proxy, c client.Client) {
			if err := get(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			p.CutAll()
			if p.Cuts() == 0 {
				t.Fatal("CutAll cut nothing")
			}
			// The first request may fail on the cut connection; one after it reconnects.
			_ = get(t.Context(), c)
			if err := get(t.Context(), c); err != nil {
				t.Fatalf("after the cut: %v", err)
			}
			if p.Connections() < 2 {
				t.Errorf("%d connections opened; want a second after the cut", p.Connections())
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := cp.StartProxy(t)
			c, err := client.New(p.Wrap(cp.Config), client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			tc.test(t, p, c)
		})
	}
}
