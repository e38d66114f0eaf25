package sharding_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/sharding"
)

// hold stops, while held, the events of one of a replica's watches from reaching it:
// what a watch stream that lags behind the others looks like to the replica.
type hold struct {
	mu      sync.Mutex
	held    bool
	release chan struct{}
}

// wrap returns a copy of cfg whose watches of resource with the label selector selector
// h holds.
func (h *hold) wrap(cfg *rest.Config, resource, selector string) *rest.Config {
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		resp, err := r.Send()
		if err != nil || r.Verb != "watch" || r.Resource != resource || r.HTTP.URL.Query().Get("labelSelector") != selector {
			return resp, err
		}
		resp.Body = &heldBody{ReadCloser: resp.Body, h: h, closed: make(chan struct{})}
		return resp, nil
	})
}

// engage holds every event not yet read.
func (h *hold) engage() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held, h.release = true, make(chan struct{})
}

// free lets the held events through.
func (h *hold) free() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held {
		h.held = false
		close(h.release)
	}
}

// waiting returns the channel closed when the hold is freed, or nil when nothing is held.
func (h *hold) waiting() chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.held {
		return nil
	}
	return h.release
}

type heldBody struct {
	io.ReadCloser
	h         *hold
	closed    chan struct{}
	closeOnce sync.Once
}

func (b *heldBody) Read(p []byte) (int, error) {
	if release := b.h.waiting(); release != nil {
		select {
		case <-release:
		case <-b.closed:
			return 0, io.EOF
		}
	}
	return b.ReadCloser.Read(p)
}

func (b *heldBody) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}

// startIdle runs a sharded manager named shard in ns through cfg, whose logic never
// touches the children: a ConfigMap is "done", as an At whose command has run, so that
// nothing but sharding itself ever labels a child again.
func startIdle(t *testing.T, cfg *rest.Config, ns, shard string) *replica {
	t.Helper()
	idle := reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome {
		return requeue.Done()
	}), "idle", reconcile.WithChildren(&corev1.Secret{}))
	return startShard(t, cfg, ns, shard, idle)
}

// createWithSecrets creates ConfigMaps named prefix-0 to prefix-<n-1> in ns, each with a
// Secret it controls, none of them labelled for a shard: objects an operator made before
// it was sharded.
func createWithSecrets(t *testing.T, c client.Client, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", prefix, i), Labels: map[string]string{"test": ""}}}
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm.Name}}
		if err := controllerutil.SetControllerReference(cm, secret, clientgoscheme.Scheme); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(t.Context(), secret); err != nil {
			t.Fatal(err)
		}
	}
}

// labelledAlike returns nil once every ConfigMap of ns is labelled, not draining, for the
// shard ring gives it, with its Secret labelled alike; secretsToo false looks at the
// ConfigMaps only.
func labelledAlike(c client.Client, ns string, ring *sharding.Ring, secretsToo bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var cms corev1.ConfigMapList
		if err := c.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{"test"}); err != nil {
			return err
		}
		for _, cm := range cms.Items {
			want := ring.Shard(sharding.Key("", "ConfigMap", ns, cm.Name))
			if got := cm.Labels[shardLabel]; got != want || cm.Labels[drainLabel] != "" {
				return fmt.Errorf("ConfigMap %s is labelled %q (drain %q), want %q", cm.Name, got, cm.Labels[drainLabel], want)
			}
			if !secretsToo {
				continue
			}
			var secret corev1.Secret
			if err := c.Get(ctx, client.ObjectKeyFromObject(&cm), &secret); err != nil {
				return err
			}
			if got := secret.Labels[shardLabel]; got != want {
				return fmt.Errorf("the Secret of ConfigMap %s (on %q) is labelled %q", cm.Name, want, got)
			}
		}
		return nil
	}
}

func TestAChildOnAnotherShardThanItsOwnerFollowsItsOwner(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	c := cp.Client(t, nil)
	ns := cp.Namespace(t)

	// "a" alone, its cache of Secrets (its manager's, selected by its shard label) able
	// to lag behind its cache of ConfigMaps.
	lag := &hold{}
	startIdle(t, lag.wrap(cp.Config, "secrets", shardLabel+"=a"), ns, "a")
	createWithSecrets(t, c, ns, "ready", 1)
	await(t, labelledAlike(c, ns, sharding.NewRing("a"), true))

	// Objects from before sharding: the assigner labels each Secret for "a", then its
	// ConfigMap; "a" sees the ConfigMaps, but its watch of Secrets lags.
	lag.engage()
	defer lag.free()
	const n = 12
	createWithSecrets(t, c, ns, "old", n)
	await(t, labelledAlike(c, ns, sharding.NewRing("a"), true))
	moving := 0
	for i := range n {
		if sharding.NewRing("a", "b").Shard(sharding.Key("", "ConfigMap", ns, fmt.Sprintf("old-%d", i))) == "b" {
			moving++
		}
	}
	if moving == 0 {
		t.Fatal("no ConfigMap moves to b: the scenario needs other names")
	}

	// "b" joins: "a" acknowledges each drain letting go of the children its cache holds,
	// which are none, and the ConfigMaps move to "b" without their Secrets.
	startIdle(t, cp.Config, ns, "b")
	await(t, labelledAlike(c, ns, sharding.NewRing("a", "b"), false))

	// Once "a" sees the Secrets it was given, it lets go of those whose owner is not its
	// own, and the assigner gives them their owner's shard.
	lag.free()
	await(t, labelledAlike(c, ns, sharding.NewRing("a", "b"), true))

	// A Secret labelled for the other live shard than its owner's, as an assigner's
	// decision on a stale read can leave it, follows its owner too.
	ring := sharding.NewRing("a", "b")
	for i := range n {
		name := fmt.Sprintf("old-%d", i)
		other := map[string]string{"a": "b", "b": "a"}[ring.Shard(sharding.Key("", "ConfigMap", ns, name))]
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, shardLabel, other)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := c.Patch(t.Context(), secret, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
	}
	await(t, labelledAlike(c, ns, ring, true))
	t.Logf("%d of %d ConfigMaps moved to b without their Secrets; the Secrets followed them", moving, n)
}
