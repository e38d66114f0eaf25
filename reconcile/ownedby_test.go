package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// widgetOwned is the value of ownership.OwnedByLabel on a Widget's children.
const widgetOwned = "widget.test.reconcilekit.io"

// configMapper is a Widget controller that ensures one ConfigMap of the Widget's name,
// holding its size, and notes the Widgets whose ConfigMap's name someone else's object has.
type configMapper struct {
	notControlled sync.Map // a Widget's name -> true
}

func (m *configMapper) declaration(opts ...reconcile.Option) *reconcile.Controller[*Widget] {
	return reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		_, _, err := ownership.Ensure(ctx, s.Writer, w, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name},
			Data:       map[string]string{"size": fmt.Sprint(w.Spec.Size)},
		})
		if ownership.IsNotControlled(err) {
			m.notControlled.Store(w.Name, true)
			return requeue.Done()
		}
		return requeue.Retry(err)
	}), "configmapper", append([]reconcile.Option{reconcile.WithChildren(&corev1.ConfigMap{})}, opts...)...)
}

// widgetIn makes a Widget in ns and returns it as the API server stored it.
func widgetIn(t *testing.T, c client.Client, ns, name string, size int32) *Widget {
	t.Helper()
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: WidgetSpec{Size: size}}
	create(t, c, w)
	return w
}

// configMapOf makes a ConfigMap in ns, controlled by owner if it is not nil, with labels.
func configMapOf(t *testing.T, c client.Client, ns, name string, owner client.Object, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: map[string]string{"size": "old"}}
	if owner != nil {
		if err := controllerutil.SetControllerReference(owner, cm, c.Scheme()); err != nil {
			t.Fatal(err)
		}
	}
	create(t, c, cm)
	return cm
}

// live reads the ConfigMap of ns and name from the API server.
func liveConfigMap(ctx context.Context, c client.Client, ns, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)
}

// inCache reports whether the manager's cache holds the ConfigMap of ns and name.
func inCache(ctx context.Context, mgr manager.Manager, ns, name string) (bool, error) {
	err := mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// A Manager caches a declaration's children by the label the Writer gives them, not every
// object of their kind: each hard case of that, against a real API server. Before the label
// existed, every case failed on the label or on the cache holding what is not the
// operator's.
func TestAManagerCachesTheChildrenOfItsDeclarationsByTheirLabel(t *testing.T) {
	ns := cp(t).Namespace(t)
	c := cp(t).Client(t, withBuiltins)

	// Before the operator runs: what an older version of it, and others, left.
	legacy := widgetIn(t, c, ns, "legacy", 1)
	configMapOf(t, c, ns, "legacy", legacy, nil) // its child, made before the label
	stale := widgetIn(t, c, ns, "stale", 1)
	configMapOf(t, c, ns, "stale-extra", stale, nil) // a child no Ensure names
	configMapOf(t, c, ns, "foreign", nil, nil)       // of a child's name, not the Widget's
	widgetIn(t, c, ns, "foreign", 1)
	configMapOf(t, c, ns, "unrelated", nil, nil) // the cluster's
	otherOwner := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-owner"}}
	create(t, c, otherOwner)
	configMapOf(t, c, ns, "others-child", otherOwner, nil) // controlled, by another kind

	m := &configMapper{}
	mgr := reconciletest.StartManager(t, cp(t).Config, reconcile.Manager{
		Options:     manager.Options{Scheme: withBuiltins, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}},
		Controllers: []reconcile.Declaration{m.declaration()},
	})
	widgetIn(t, c, ns, "relabel", 2)

	labelled := func(name, size string) func(context.Context) error {
		return func(ctx context.Context) error {
			cm, err := liveConfigMap(ctx, c, ns, name)
			if err != nil {
				return err
			}
			if got := cm.Labels[ownership.OwnedByLabel]; got != widgetOwned {
				return fmt.Errorf("ConfigMap %s labelled %s=%q, want %q", name, ownership.OwnedByLabel, got, widgetOwned)
			}
			if size != "" && cm.Data["size"] != size {
				return fmt.Errorf("ConfigMap %s has size %q, want %s", name, cm.Data["size"], size)
			}
			if ok, err := inCache(ctx, mgr, ns, name); !ok {
				return fmt.Errorf("ConfigMap %s is labelled but not in the manager's cache (%v)", name, err)
			}
			return nil
		}
	}

	t.Run("a child made by the Writer is labelled and cached", func(t *testing.T) {
		reconciletest.Eventually(t, labelled("relabel", "2"))
	})
	t.Run("a child made before the label is found live, adopted once and labelled", func(t *testing.T) {
		reconciletest.Eventually(t, labelled("legacy", "1"))
	})
	t.Run("a child no Ensure names is labelled as the manager starts, for Delete and lists to find", func(t *testing.T) {
		reconciletest.Eventually(t, labelled("stale-extra", "old"))
	})
	t.Run("an object of a child's name controlled by no one is NotControlled and never taken over", func(t *testing.T) {
		reconciletest.Eventually(t, func(context.Context) error {
			if _, ok := m.notControlled.Load("foreign"); !ok {
				return errors.New("the Widget foreign's Ensure has not returned a NotControlledError")
			}
			return nil
		})
		cm, err := liveConfigMap(t.Context(), c, ns, "foreign")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cm.Labels[ownership.OwnedByLabel]; ok || cm.Data["size"] != "old" || metav1.GetControllerOf(cm) != nil {
			t.Errorf("the foreign ConfigMap was changed: labels %v, data %v, controller %v", cm.Labels, cm.Data, metav1.GetControllerOf(cm))
		}
	})
	t.Run("the cluster's objects of a child kind are not cached", func(t *testing.T) {
		for _, name := range []string{"foreign", "unrelated", "others-child"} {
			if ok, err := inCache(t.Context(), mgr, ns, name); ok || err != nil {
				t.Errorf("the manager's cache holds ConfigMap %s, which is not a Widget's (%v)", name, err)
			}
		}
		cm, err := liveConfigMap(t.Context(), c, ns, "others-child")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cm.Labels[ownership.OwnedByLabel]; ok {
			t.Errorf("a ConfigMap controlled by a Secret was labelled as a Widget's child: %v", cm.Labels)
		}
	})
	t.Run("a child deleted by someone else is made again, labelled", func(t *testing.T) {
		reconciletest.Eventually(t, labelled("legacy", "1"))
		cm, err := liveConfigMap(t.Context(), c, ns, "legacy")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		reconciletest.Eventually(t, func(ctx context.Context) error {
			again, err := liveConfigMap(ctx, c, ns, "legacy")
			if err != nil {
				return err
			}
			if again.UID == cm.UID {
				return errors.New("the ConfigMap deleted is still there")
			}
			return labelled("legacy", "1")(ctx)
		})
	})
	t.Run("a child whose label someone removed or changed gets it back", func(t *testing.T) {
		for _, value := range []string{"", "someone-else"} {
			reconciletest.Eventually(t, labelled("relabel", "2"))
			cm, err := liveConfigMap(t.Context(), c, ns, "relabel")
			if err != nil {
				t.Fatal(err)
			}
			if value == "" {
				delete(cm.Labels, ownership.OwnedByLabel)
			} else {
				cm.Labels[ownership.OwnedByLabel] = value
			}
			if err := c.Update(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if ok, _ := inCache(ctx, mgr, ns, "relabel"); ok {
					return errors.New("the cache has yet to let the relabelled ConfigMap go")
				}
				return nil
			})
			reconciletest.Eventually(t, labelled("relabel", "2"))
		}
	})
	t.Run("a change of a labelled child is reverted, from the cache", func(t *testing.T) {
		cm, err := liveConfigMap(t.Context(), c, ns, "relabel")
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["size"] = "drifted"
		if err := c.Update(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		reconciletest.Eventually(t, labelled("relabel", "2"))
	})
}

// A kind a declaration owns and references too (a Secret it makes, and one it reads) is
// cached in full: the Secret it reads carries no label of its, and a cache of the children
// alone would not hold it. This held before the label existed, and guards the default
// against taking the referenced kind in.
func TestAKindOwnedAndReferencedIsCachedInFull(t *testing.T) {
	ns := cp(t).Namespace(t)
	c := cp(t).Client(t, withBuiltins)
	shared := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}, StringData: map[string]string{"v": "1"}}
	create(t, c, shared)
	copier := reconcile.For(&Widget{}, reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		src := &corev1.Secret{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: "shared"}, src); err != nil {
			return requeue.Retry(err)
		}
		_, _, err := ownership.Ensure(ctx, s.Writer, w, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Data: src.Data,
		})
		return requeue.Retry(err)
	}), "copier", reconcile.WithChildren(&corev1.Secret{})).
		WithReferences(&corev1.Secret{}, func(*Widget) []string { return []string{"shared"} })
	reconciletest.StartManager(t, cp(t).Config, reconcile.Manager{
		Options:     manager.Options{Scheme: withBuiltins, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}},
		Controllers: []reconcile.Declaration{copier},
	})
	widgetIn(t, c, ns, "w", 1)
	copied := func(v string) func(context.Context) error {
		return func(ctx context.Context) error {
			s := &corev1.Secret{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w"}, s); err != nil {
				return err
			}
			if string(s.Data["v"]) != v || s.Labels[ownership.OwnedByLabel] != widgetOwned {
				return fmt.Errorf("the Widget's Secret has v=%q and labels %v, want v=%s and its label", s.Data["v"], s.Labels, v)
			}
			return nil
		}
	}
	reconciletest.Eventually(t, copied("1"))
	shared.StringData = map[string]string{"v": "2"}
	if err := c.Update(t.Context(), shared); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, copied("2"))
}

// WithCacheAll caches every object of a child kind, as controller-runtime does; and a
// declared restriction (WithCache) replaces the label's. Neither option had an effect to
// test before the label existed (WithCacheAll did not exist).
func TestWithCacheAllAndWithCacheOverrideTheChildrensLabel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opt    reconcile.Option
		cached map[string]bool // ConfigMap name -> in the cache
	}{
		{"WithCacheAll", reconcile.WithCacheAll(&corev1.ConfigMap{}), map[string]bool{"w": true, "unrelated": true, "picked": true}},
		{"WithCache", reconcile.WithCache(&corev1.ConfigMap{}, cache.ByObject{Label: mustSelector(t, "picked=yes")}), map[string]bool{"w": false, "unrelated": false, "picked": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cp(t).Namespace(t)
			c := cp(t).Client(t, withBuiltins)
			configMapOf(t, c, ns, "unrelated", nil, nil)
			configMapOf(t, c, ns, "picked", nil, map[string]string{"picked": "yes"})
			m := &configMapper{}
			mgr := reconciletest.StartManager(t, cp(t).Config, reconcile.Manager{
				Options:     manager.Options{Scheme: withBuiltins, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}},
				Controllers: []reconcile.Declaration{m.declaration(tc.opt)},
			})
			widgetIn(t, c, ns, "w", 1)
			reconciletest.Eventually(t, func(ctx context.Context) error {
				cm, err := liveConfigMap(ctx, c, ns, "w")
				if err != nil {
					return err
				}
				if cm.Labels[ownership.OwnedByLabel] != widgetOwned {
					return fmt.Errorf("the Widget's ConfigMap has labels %v, want its label all the same", cm.Labels)
				}
				return nil
			})
			reconciletest.Eventually(t, func(ctx context.Context) error {
				for name, want := range tc.cached {
					if got, err := inCache(ctx, mgr, ns, name); got != want || err != nil {
						return fmt.Errorf("ConfigMap %s in the cache: %t, want %t (%v)", name, got, want, err)
					}
				}
				return nil
			})
		})
	}
}

// Setup cannot restrict the cache of a manager made already: it says so once, naming the
// restriction Manager would make, and the controller runs, its children labelled.
func TestSetupSaysItCannotRestrictTheCacheToTheChildren(t *testing.T) {
	ns := cp(t).Namespace(t)
	var mu sync.Mutex
	var logged []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, prefix+" "+args)
	}, funcr.Options{})
	mgr, err := ctrl.NewManager(cp(t).Config, ctrl.Options{
		Scheme: withBuiltins, Logger: logger, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &configMapper{}
	if err := reconcile.Setup(mgr, m.declaration(reconcile.WithCacheAll(&corev1.Secret{}))); err != nil {
		t.Fatalf("Setup refused a declaration with children (and WithCacheAll): %v", err)
	}
	mu.Lock()
	var said string
	for _, line := range logged {
		if strings.Contains(line, "cannot restrict the cache") {
			said = line
		}
	}
	mu.Unlock()
	if !strings.Contains(said, "reconcilekit.io/owned-by in ("+widgetOwned+")") || !strings.Contains(said, "corev1.ConfigMap") {
		t.Errorf("Setup's log does not name the restriction it cannot make: %q", said)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	c := cp(t).Client(t, withBuiltins)
	configMapOf(t, c, ns, "unrelated", nil, nil)
	widgetIn(t, c, ns, "w", 3)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		cm, err := liveConfigMap(ctx, c, ns, "w")
		if err != nil {
			return err
		}
		if cm.Data["size"] != "3" || cm.Labels[ownership.OwnedByLabel] != widgetOwned {
			return fmt.Errorf("the Widget's ConfigMap has data %v, labels %v", cm.Data, cm.Labels)
		}
		if ok, err := inCache(ctx, mgr, ns, "unrelated"); !ok {
			return fmt.Errorf("the project's cache does not hold every ConfigMap, as it did (%v)", err)
		}
		return nil
	})
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
