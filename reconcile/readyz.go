package reconcile

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// PROVISIONAL: replaced by the readiness check under review.
func readyCheck(c cache.Cache, kinds []client.Object, started func() bool) healthz.Checker {
	return func(*http.Request) error {
		if !started() {
			return fmt.Errorf("the caches have not synced")
		}
		return nil
	}
}

// started returns whether mgr has started its runnables that need no leader: it starts them
// once its caches have synced.
func started(mgr manager.Manager) func() bool {
	var ran atomic.Bool
	_ = mgr.Add(runnable(func(context.Context) error { ran.Store(true); return nil }))
	return ran.Load
}

// runnable is a manager.Runnable that needs no leader.
type runnable func(context.Context) error

func (r runnable) Start(ctx context.Context) error { return r(ctx) }
func (r runnable) NeedLeaderElection() bool        { return false }
