package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	rthandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// Gadget is the optional kind of these tests: a Widget owns one, and its CRD (gadgetCRD) is
// installed and removed while the operator runs.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GadgetSpec `json:"spec,omitempty"`
}

// GadgetSpec is what a Gadget should be.
type GadgetSpec struct {
	Size int32 `json:"size,omitempty"`
}

// GadgetList is a list of Gadgets.
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Gadget `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (g *Gadget) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (l *GadgetList) DeepCopyObject() runtime.Object {
	out := &GadgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for _, g := range l.Items {
		out.Items = append(out.Items, *g.DeepCopyObject().(*Gadget))
	}
	return out
}

var gadgetGVK = schema.GroupVersionKind{Group: "optional.reconcilekit.io", Version: "v1", Kind: "Gadget"}

// gadgetCRDName is the name of Gadget's CRD, which the condition of a Widget waiting for
// it names.
const gadgetCRDName = "gadgets.optional.reconcilekit.io"

// withGadgets knows Widgets, Gadgets, CRDs and client-go's kinds.
var withGadgets = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(widgetGVK.GroupVersion(), &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGVK.GroupVersion())
	s.AddKnownTypes(gadgetGVK.GroupVersion(), &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(s, gadgetGVK.GroupVersion())
	return s
}()

// gadgetCRD declares Gadgets.
func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: gadgetCRDName},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gadgetGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", ListKind: "GadgetList", Plural: "gadgets", Singular: "gadget"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: gadgetGVK.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size": {Type: "integer", Format: "int32"},
						}},
					},
				}},
			}},
		},
	}
}

// installGadgets creates Gadget's CRD and waits until it is established.
func installGadgets(t *testing.T, c client.Client) {
	t.Helper()
	if err := c.Create(t.Context(), gadgetCRD()); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: gadgetCRDName}, crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("the CRD of Gadgets is not established yet")
	})
}

// removeGadgets deletes Gadget's CRD, if it exists, and waits until it is gone (its
// Gadgets with it). It runs in a cleanup too, once the test's context has ended.
func removeGadgets(t *testing.T, c client.Client) {
	t.Helper()
	if err := c.Delete(context.Background(), gadgetCRD()); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	var last error
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		last = c.Get(ctx, client.ObjectKey{Name: gadgetCRDName}, &apiextensionsv1.CustomResourceDefinition{})
		return apierrors.IsNotFound(last), nil
	}); err != nil {
		t.Fatalf("the CRD of Gadgets is still there: %v (%v)", err, last)
	}
}

// waitingKinds returns reconcilekit_kinds_waiting_for_crd of Gadget, as a scrape reads it.
func waitingKinds(t *testing.T) (float64, bool) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "reconcilekit_kinds_waiting_for_crd" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "Gadget."+gadgetGVK.Group {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// An operator whose Widgets own Gadgets, declared optional, runs while Gadget's CRD comes
// and goes, and is never restarted: while the CRD is absent every Widget is Stalled with a
// condition naming the CRD, the logic is not run again and again, nothing asks the API
// server for Gadgets, the gauge says 1 and /readyz passes; once the CRD is established the
// Widgets go on, the watch of Gadgets runs (a Gadget deleted is made again), the gauge says
// 0 and /readyz still passes.
func TestAnOptionalKindsWatchStartsAndStopsWithItsCRDWithoutARestart(t *testing.T) {
	type step string
	const (
		install step = "install the CRD"
		remove  step = "remove the CRD"
	)
	for _, tc := range []struct {
		name       string
		atStart    bool // the CRD is installed before the operator starts
		swallow    bool // the logic ignores Ensure's error
		restricted bool // the Gadgets cached are restricted by a label, as a shard's are
		steps      []step
	}{{
		name:  "the CRD installed late, removed, installed again; the logic returns Ensure's error",
		steps: []step{install, remove, install},
	}, {
		name:    "the CRD installed before the start, then removed and installed again; the logic swallows Ensure's error",
		atStart: true, swallow: true,
		steps: []step{remove, install},
	}, {
		name:       "the CRD installed late, the cache of Gadgets restricted by a label (WithCache)",
		restricted: true,
		steps:      []step{install, remove},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := cp(t).Client(t, withGadgets)
			removeGadgets(t, c) // a CRD left by an earlier test that failed
			t.Cleanup(func() { removeGadgets(t, c) })
			if tc.atStart {
				installGadgets(t, c)
			}
			ns := cp(t).Namespace(t)

			var runs atomic.Int32 // of the logic
			logic := reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
				runs.Add(1)
				gadget := &Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Spec: GadgetSpec{Size: w.Spec.Size}}
				if tc.restricted {
					gadget.Labels = map[string]string{"optional-test": "yes"}
				}
				if _, _, err := ownership.Ensure(ctx, s.Writer, w, gadget); err != nil && !tc.swallow {
					return requeue.Retry(err)
				}
				return requeue.Done()
			})
			var gadgetRequests atomic.Int32
			cfg := reconciletest.Intercept(cp(t).Config, func(r *reconciletest.Request) (*http.Response, error) {
				if r.Resource == "gadgets" {
					gadgetRequests.Add(1)
				}
				return r.Send()
			})
			addr := reconciletest.FreeAddress(t)
			opts := []reconcile.Option{reconcile.WithChildren(&Gadget{}), reconcile.WithOptional(&Gadget{})}
			if tc.restricted {
				opts = append(opts, reconcile.WithCache(&Gadget{}, byLabel("optional-test")))
			}
			reconciletest.StartManager(t, cfg, reconcile.Manager{
				Options: ctrl.Options{
					Scheme:                 withGadgets,
					HealthProbeBindAddress: addr,
					Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
				},
				Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, logic, "widget-operator", opts...)},
			})
			widget := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"}, Spec: WidgetSpec{Size: 2}}
			if err := c.Create(t.Context(), widget); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(widget)

			ready := func(t *testing.T) {
				t.Helper()
				reconciletest.Eventually(t, func(ctx context.Context) error {
					code, body, err := probeGet(ctx, "http://"+addr+"/readyz/"+reconcile.ControllersCheck)
					if err != nil {
						return err
					}
					if code != http.StatusOK {
						return fmt.Errorf("/readyz/controllers answered %d: %s", code, body)
					}
					return nil
				})
			}
			gauge := func(t *testing.T, want float64) {
				t.Helper()
				reconciletest.Eventually(t, func(context.Context) error {
					if got, ok := waitingKinds(t); !ok || got != want {
						return fmt.Errorf("reconcilekit_kinds_waiting_for_crd{kind=Gadget.%s} = %v (served: %v), want %v", gadgetGVK.Group, got, ok, want)
					}
					return nil
				})
			}
			// installed: the Widget is Ready with its Gadget, and a Gadget deleted is made
			// again, which only the watch of Gadgets can have told the controller.
			installed := func(t *testing.T) {
				t.Helper()
				var uid string
				reconciletest.Eventually(t, func(ctx context.Context) error {
					w, g := &Widget{}, &Gadget{}
					if err := c.Get(ctx, key, w); err != nil {
						return err
					}
					if !conditions.IsTrue(w, conditions.Ready) {
						return fmt.Errorf("the Widget is not Ready: %+v", w.Status.Conditions)
					}
					if err := c.Get(ctx, key, g); err != nil {
						return err
					}
					if g.Spec.Size != 2 {
						return fmt.Errorf("the Gadget's size is %d, want 2", g.Spec.Size)
					}
					uid = string(g.UID)
					return nil
				})
				if err := c.Delete(t.Context(), &Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"}}); err != nil {
					t.Fatal(err)
				}
				reconciletest.Eventually(t, func(ctx context.Context) error {
					g := &Gadget{}
					if err := c.Get(ctx, key, g); err != nil {
						return err
					}
					if string(g.UID) == uid {
						return errors.New("the Gadget deleted is still there")
					}
					return nil
				})
				gauge(t, 0)
				ready(t)
			}
			// waiting: the Widget is Stalled naming the CRD, and stays so quietly: no
			// reconcile, no request for Gadgets.
			waiting := func(t *testing.T) {
				t.Helper()
				reconciletest.Eventually(t, func(ctx context.Context) error {
					w := &Widget{}
					if err := c.Get(ctx, key, w); err != nil {
						return err
					}
					stalled := conditions.Find(w, conditions.Stalled)
					if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != reconcile.ReasonWaitingForCRD ||
						!strings.Contains(stalled.Message, gadgetCRDName) {
						return fmt.Errorf("Stalled = %+v, want True, %s, naming %s", stalled, reconcile.ReasonWaitingForCRD, gadgetCRDName)
					}
					if ready := conditions.Find(w, conditions.Ready); ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != reconcile.ReasonWaitingForCRD {
						return fmt.Errorf("Ready = %+v, want False, %s", ready, reconcile.ReasonWaitingForCRD)
					}
					if w.Status.ObservedGeneration != w.Generation {
						return fmt.Errorf("observedGeneration %d, generation %d", w.Status.ObservedGeneration, w.Generation)
					}
					t.Logf("Stalled: %s: %s", stalled.Reason, stalled.Message)
					return nil
				})
				reconciletest.Eventually(t, func(ctx context.Context) error {
					var events eventsv1.EventList
					if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
						return err
					}
					for _, e := range events.Items {
						if e.Regarding.Name == widget.Name && e.Type == corev1.EventTypeWarning && e.Reason == reconcile.ReasonWaitingForCRD &&
							strings.Contains(e.Note, gadgetCRDName) {
							return nil
						}
					}
					return fmt.Errorf("no Warning %s event naming %s regarding the Widget", reconcile.ReasonWaitingForCRD, gadgetCRDName)
				})
				gauge(t, 1)
				ready(t)
				time.Sleep(time.Second) // a retry queued before the CRD went may still run once
				runsBefore, requestsBefore := runs.Load(), gadgetRequests.Load()
				time.Sleep(3 * time.Second)
				if n := runs.Load() - runsBefore; n != 0 {
					t.Errorf("the logic ran %d times in 3 s while the Widget waited for the CRD, want none", n)
				}
				if n := gadgetRequests.Load() - requestsBefore; n != 0 {
					t.Errorf("%d requests for Gadgets in 3 s while their CRD was absent, want none (the informer should be gone)", n)
				}
			}

			if tc.atStart {
				installed(t)
			} else {
				waiting(t)
			}
			for _, s := range tc.steps {
				t.Run(string(s), func(t *testing.T) {
					switch s {
					case install:
						installGadgets(t, c)
						installed(t)
					case remove:
						removeGadgets(t, c)
						waiting(t)
					}
				})
				if t.Failed() {
					return
				}
			}
		})
	}
}

// A kind referenced by name and declared optional is waited for as an owned one is, and
// once its CRD is established its watch runs: a Widget that read no Gadget of the name it
// references goes on when one is created, which only the watch of Gadgets tells the
// controller (the logic asks for no retry). Removed again, the CRD stalls the Widget again.
func TestAReferencedOptionalKindIsWaitedForThenWatched(t *testing.T) {
	c := cp(t).Client(t, withGadgets)
	removeGadgets(t, c)
	t.Cleanup(func() { removeGadgets(t, c) })
	ns := cp(t).Namespace(t)
	const configured = "Configured"
	logic := reconcile.LogicFunc[*Widget](func(ctx context.Context, w *Widget, s reconcile.Scope) requeue.Outcome {
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: "config"}, &Gadget{})
		switch {
		case apierrors.IsNotFound(err):
			conditions.MarkFalse(w, configured, "NoGadget", "no Gadget named config")
		case err != nil:
			return requeue.Retry(err)
		default:
			conditions.MarkTrue(w, configured, "Found", "Gadget config found")
		}
		return requeue.Done()
	})
	reconciletest.StartManager(t, cp(t).Config, reconcile.Manager{
		Options: ctrl.Options{
			Scheme: withGadgets,
			Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		},
		Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, logic, "widget-operator",
			reconcile.WithOptional(&Gadget{})).
			WithReferences(&Gadget{}, func(*Widget) []string { return []string{"config"} })},
	})
	widget := &Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"}}
	if err := c.Create(t.Context(), widget); err != nil {
		t.Fatal(err)
	}
	// condition waits until the Widget's condition typ has reason.
	condition := func(typ, reason string) {
		t.Helper()
		reconciletest.Eventually(t, func(ctx context.Context) error {
			w := &Widget{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(widget), w); err != nil {
				return err
			}
			if got := conditions.Find(w, typ); got == nil || got.Reason != reason {
				return fmt.Errorf("%s = %+v, want reason %s", typ, got, reason)
			}
			return nil
		})
	}

	condition(conditions.Stalled, reconcile.ReasonWaitingForCRD)
	installGadgets(t, c)
	condition(configured, "NoGadget")
	if err := c.Create(t.Context(), &Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "config"}}); err != nil {
		t.Fatal(err)
	}
	condition(configured, "Found")
	condition(conditions.Ready, reconcile.ReasonReconciled)
	removeGadgets(t, c)
	condition(conditions.Stalled, reconcile.ReasonWaitingForCRD)
}

// /readyz counts an optional kind only while its CRD exists: it fails until the manager
// has listed the CRDs, passes while Gadget's CRD is absent, and once the CRD is installed
// fails until Gadget's informer has synced. The lists are held by the test until it
// releases them.
func TestReadyzCountsAnOptionalKindOnlyWhileItsCRDExists(t *testing.T) {
	c := cp(t).Client(t, withGadgets)
	removeGadgets(t, c)
	t.Cleanup(func() { removeGadgets(t, c) })
	ns := cp(t).Namespace(t)

	held := map[string]chan struct{}{"customresourcedefinitions": make(chan struct{}), "gadgets": make(chan struct{})}
	released := map[string]bool{}
	release := func(resource string) {
		if !released[resource] {
			released[resource] = true
			close(held[resource])
		}
	}
	cfg := reconciletest.Intercept(cp(t).Config, func(r *reconciletest.Request) (*http.Response, error) {
		if ch, ok := held[r.Resource]; ok && (r.Verb == "list" || r.Verb == "watch") {
			select {
			case <-ch:
			case <-r.HTTP.Context().Done():
				return nil, r.HTTP.Context().Err()
			}
		}
		return r.Send()
	})
	addr := reconciletest.FreeAddress(t)
	reconciletest.StartManager(t, cfg, reconcile.Manager{
		Options: ctrl.Options{
			Scheme:                 withGadgets,
			HealthProbeBindAddress: addr,
			Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		},
		Controllers: []reconcile.Declaration{reconcile.For(&Widget{}, sized, "widget-operator",
			reconcile.WithChildren(&Gadget{}),
			reconcile.WithOptional(&Gadget{}))},
	})
	t.Cleanup(func() { release("customresourcedefinitions"); release("gadgets") }) // before the manager stops

	// readyz waits until /readyz/controllers answers 200 if ready, a failure (any status from
	// 400, as the kubelet reads it) otherwise, with a reason that says want.
	readyz := func(ready bool, want string) {
		t.Helper()
		reconciletest.Eventually(t, func(ctx context.Context) error {
			code, reason, err := probeGet(ctx, "http://"+addr+"/readyz/"+reconcile.ControllersCheck)
			if err != nil {
				return err
			}
			if (code == http.StatusOK) != ready || (!ready && code < 400) || !strings.Contains(reason, want) {
				return fmt.Errorf("/readyz/controllers answered %d %q, want ready %v saying %q", code, reason, ready, want)
			}
			return nil
		})
	}
	for _, phase := range []struct {
		name   string
		before func(t *testing.T)
		ready  bool
		want   string
	}{{
		name: "until the CRDs are listed, it fails",
		want: "Gadget.optional.reconcilekit.io (CustomResourceDefinitions not listed yet)",
	}, {
		name:   "while the CRD is absent, the kind does not count",
		before: func(*testing.T) { release("customresourcedefinitions") },
		ready:  true,
	}, {
		name:   "once the CRD is installed, it fails until the kind's informer has synced",
		before: func(t *testing.T) { installGadgets(t, c) },
		want:   "informers not synced: Gadget.optional.reconcilekit.io",
	}, {
		name:   "then it passes",
		before: func(*testing.T) { release("gadgets") },
		ready:  true,
	}} {
		t.Run(phase.name, func(t *testing.T) {
			if phase.before != nil {
				phase.before(t)
			}
			readyz(phase.ready, phase.want)
		})
	}
}

// Each optional kind that cannot be is refused when the manager is made, with a message
// that names the fix.
func TestOptionalKindsThatCannotBeAreRefusedNamingTheFix(t *testing.T) {
	widgets := func(opts ...reconcile.Option) reconcile.Declaration {
		return reconcile.For(&Widget{}, sized, "widget-operator", opts...)
	}
	for _, tc := range []struct {
		name string
		spec reconcile.Manager
		want []string
	}{{
		name: "the reconciled kind optional",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithOptional(&Widget{}))}},
		want: []string{"WithOptional(&reconcile_test.Widget{}) names the reconciled kind"},
	}, {
		name: "an optional kind declared nowhere else",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithOptional(&Gadget{}))}},
		want: []string{"WithOptional(&reconcile_test.Gadget{}) names a kind the controller does not declare", "WithChildren, WithReferences or WithWatch"},
	}, {
		name: "a kind the API server serves itself",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{widgets(reconcile.WithChildren(&corev1.ConfigMap{}), reconcile.WithOptional(&corev1.ConfigMap{}))}},
		want: []string{"WithOptional(&corev1.ConfigMap{})", "served by the API server itself", "remove it from WithOptional"},
	}, {
		name: "a kind optional for one controller and required by another",
		spec: reconcile.Manager{Controllers: []reconcile.Declaration{
			widgets(reconcile.WithChildren(&Gadget{}), reconcile.WithOptional(&Gadget{})),
			reconcile.For(&corev1.ConfigMap{}, reconcile.LogicFunc[*corev1.ConfigMap](func(context.Context, *corev1.ConfigMap, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "other", reconcile.WithWatch(&Gadget{}, &rthandler.EnqueueRequestForObject{})),
		}},
		want: []string{"Gadget is optional for the Widget controller (WithOptional) and required by the ConfigMap controller", "declare it optional in both or in neither"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Options.Scheme = withGadgets
			spec.Options.Metrics = metricsserver.Options{BindAddress: "0"}
			spec.Options.Controller = config.Controller{SkipNameValidation: new(true)}
			_, err := spec.New(cp(t).Config)
			if err == nil {
				t.Fatal("the manager was made")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error %q does not say %q", err, want)
				}
			}
		})
	}
}
