package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// The resync starts once nothing has changed for quiet, or after quietLimit in any case.
const quiet, quietLimit = 3 * time.Second, 30 * time.Minute

// awaitQuiet waits until nothing of k's kind or of the kinds the benchmark's operators own
// or watch has changed in namespace for quiet, at most quietLimit, and prints how long
// that took and what changed meanwhile. At N=10,000 the control plane goes on updating
// children for minutes after the last object converged (the disruption controller, one
// worker, writes the PodDisruptionBudgets' statuses), and each update wakes an operator
// that watches that kind: a resync started then would measure the control plane catching
// up, not the operator, and would never go idle. A control plane still busy at quietLimit
// is said, and the resync goes on.
func awaitQuiet(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, k *kind) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var last time.Time
	changed := map[string]int{}
	synced := false
	for _, obj := range []client.Object{k.object("", ""), &corev1.Pod{}, &appsv1.Deployment{}, &appsv1.StatefulSet{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}, &corev1.ConfigMap{}} {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return err
		}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(gvk) // metadata alone: a status update changes the resourceVersion
		informer, err := c.GetInformer(ctx, meta)
		if err != nil {
			return err
		}
		seen := func(any) {
			mu.Lock()
			defer mu.Unlock()
			if synced {
				last = time.Now()
				changed[gvk.Kind]++
			}
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    seen,
			UpdateFunc: func(_, obj any) { seen(obj) },
			DeleteFunc: seen,
		}); err != nil {
			return err
		}
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = c.Start(ctx)
	}()
	defer func() {
		stop()
		<-stopped // its informers gone, so that they take nothing from the resync
	}()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the cache of what changes before the resync did not sync")
	}
	start := time.Now()
	mu.Lock()
	synced, last = true, start
	mu.Unlock()
	for {
		mu.Lock()
		still, since, changes := time.Since(last) < quiet, time.Since(start), len(changed)
		mu.Unlock()
		switch {
		case !still && changes == 0:
			return nil
		case !still || since >= quietLimit:
			how := "quiet"
			if still {
				how = "still busy, the resync starts anyway,"
			}
			mu.Lock()
			counts := make([]string, 0, len(changed))
			for kind, n := range changed {
				counts = append(counts, fmt.Sprintf("%d %s", n, kind))
			}
			mu.Unlock()
			sort.Strings(counts)
			fmt.Fprintf(os.Stderr, "  %s: the control plane was %s after %s: changes meanwhile %s\n", k.name, how, since.Round(time.Second), strings.Join(counts, ", "))
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
