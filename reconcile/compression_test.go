package reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// A manager's informers watch with compressed events when their client asks for them
// (Kubernetes 1.37, WatchListCompression): the test counts the answers the client had to
// decompress, until a ConfigMap created after the manager started has been reconciled.
func TestAManagerAsksTheAPIServerForNoCompressionUnlessTold(t *testing.T) {
	for name, compression := range map[string]bool{"by default": false, "with Compression": true} {
		t.Run(name, func(t *testing.T) {
			ns := cp(t).Namespace(t)
			var watches, compressed atomic.Int32
			cfg := reconciletest.Intercept(cp(t).Config, func(r *reconciletest.Request) (*http.Response, error) {
				resp, err := r.Send()
				if err == nil && r.Verb == "watch" {
					watches.Add(1)
				}
				if err == nil && resp.Uncompressed {
					compressed.Add(1)
				}
				return resp, err
			})
			var seen atomic.Bool
			copier := reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](
				func(_ context.Context, cm *corev1.ConfigMap, _ reconcile.Scope) requeue.Outcome {
					if cm.Name == "after" {
						seen.Store(true)
					}
					return requeue.Done()
				}), "copier")
			reconciletest.StartManager(t, cfg, reconcile.Manager{
				Options: manager.Options{
					Scheme: withBuiltins,
					Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
				},
				Controllers: []reconcile.Declaration{copier},
				Compression: compression,
			})
			reconciletest.Eventually(t, func(context.Context) error {
				if watches.Load() == 0 {
					return fmt.Errorf("no watch yet")
				}
				return nil
			})
			c := cp(t).Client(t, withBuiltins)
			if err := c.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after"}}); err != nil {
				t.Fatal(err)
			}
			reconciletest.Eventually(t, func(context.Context) error {
				if !seen.Load() {
					return fmt.Errorf("the ConfigMap is not reconciled yet")
				}
				return nil
			})
			if got := compressed.Load() > 0; got != compression {
				t.Errorf("%d of the manager's answers came compressed (%d watches); want compressed answers: %v", compressed.Load(), watches.Load(), compression)
			}
		})
	}
}
