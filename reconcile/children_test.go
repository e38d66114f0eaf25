package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// A reconcile does not run on a cache that has yet to show a child the previous reconcile
// of the same object created: logic written the plain way (read the child from the cache,
// create it when missing) would create it a second time. The reconcile is put off until the
// child's watch event arrives, and then runs.
func TestAReconcileWaitsForTheCacheToShowAChildTheLastOneCreated(t *testing.T) {
	ns := cp(t).Namespace(t)
	watch := &heldWatch{}
	var createdTwice, reconciles atomic.Int32
	var lastSeen sync.Map // a ConfigMap's name -> the data["v"] its last reconcile saw
	copier := reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](
		func(ctx context.Context, cm *corev1.ConfigMap, s reconcile.Scope) requeue.Outcome {
			reconciles.Add(1)
			lastSeen.Store(cm.Name, cm.Data["v"])
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}}
			err := s.Writer.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)
			if !apierrors.IsNotFound(err) {
				return requeue.Retry(err) // nil: done
			}
			if err := controllerutil.SetControllerReference(cm, secret, s.Writer.Client.Scheme()); err != nil {
				return requeue.Terminal(err)
			}
			err = s.Writer.Client.Create(ctx, secret)
			if apierrors.IsAlreadyExists(err) {
				createdTwice.Add(1)
			}
			return requeue.Retry(err)
		}), "copier", reconcile.WithChildren(&corev1.Secret{}))
	reconciletest.StartManager(t, watch.wrap(cp(t).Config, "secrets"), reconcile.Manager{
		Options:     manager.Options{Scheme: withBuiltins, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}},
		Controllers: []reconcile.Declaration{copier},
	})
	t.Cleanup(watch.free) // before the manager stops, so that its informer does

	c := cp(t).Client(t, withBuiltins)
	hasSecret := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
		}
	}
	// One object through, so that the manager runs and its caches have synced.
	create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}})
	reconciletest.Eventually(t, hasSecret("first"))

	watch.hold()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"}, Data: map[string]string{"v": "1"}}
	create(t, c, cm)
	reconciletest.Eventually(t, hasSecret("held"))
	deferred := testutil.ToFloat64(telemetry.Deferred.WithLabelValues("ConfigMap", telemetry.Child))
	cm.Data["v"] = "2" // reconciles it at once, while the cache has yet to see its Secret
	if err := c.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(context.Context) error {
		if createdTwice.Load() > 0 {
			return nil // fails below
		}
		if testutil.ToFloat64(telemetry.Deferred.WithLabelValues("ConfigMap", telemetry.Child)) == deferred {
			return errors.New("the second reconcile has been neither put off nor run")
		}
		return nil
	})
	if n := createdTwice.Load(); n > 0 {
		t.Fatalf("a reconcile ran on a cache without the Secret the last one created, and created it again (%d AlreadyExists)", n)
	}

	watch.free()
	reconciletest.Eventually(t, func(context.Context) error {
		if v, _ := lastSeen.Load("held"); v != "2" {
			return fmt.Errorf("the last reconcile saw v=%v; want the update's 2", v)
		}
		return nil
	})
	if n := createdTwice.Load(); n > 0 {
		t.Errorf("%d AlreadyExists after the watch caught up; want none", n)
	}
	t.Logf("%d reconciles", reconciles.Load())
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// heldWatch holds the watch events of a resource: while held, its watches deliver nothing,
// not even an event already on its way; freed, they deliver what they held, in order.
type heldWatch struct {
	mu      sync.Mutex
	release chan struct{} // nil: not held
}

func (h *heldWatch) hold() { h.mu.Lock(); h.release = make(chan struct{}); h.mu.Unlock() }

func (h *heldWatch) free() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		close(h.release)
		h.release = nil
	}
}

// wait returns once the watch is not held, or done is closed.
func (h *heldWatch) wait(done <-chan struct{}) {
	h.mu.Lock()
	release := h.release
	h.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-done:
		}
	}
}

// wrap returns a copy of cfg whose watches of resource h holds.
func (h *heldWatch) wrap(cfg *rest.Config, resource string) *rest.Config {
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		resp, err := r.Send()
		if err != nil || r.Verb != "watch" || r.Resource != resource {
			return resp, err
		}
		resp.Body = &heldBody{ReadCloser: resp.Body, h: h, closed: make(chan struct{})}
		return resp, nil
	})
}

// heldBody checks the hold after each read from the API server, before handing the bytes
// on: a read that was waiting when the hold began delivers nothing until it ends.
type heldBody struct {
	io.ReadCloser
	h         *heldWatch
	closed    chan struct{}
	closeOnce sync.Once
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.h.wait(b.closed)
	return n, err
}

func (b *heldBody) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}
