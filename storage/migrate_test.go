package storage_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/storage"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// objects is how many Gadgets each scenario writes in the old version.
const objects = 1000

func init() { ctrl.SetLogger(logr.Discard()) }

// 1,000 Gadgets are written while v1alpha1 is the storage version, then the CRD stores
// v1beta1 and the migration runs while the Gadget's operator serves its conversion. Each
// scenario ends with every Gadget stored as v1beta1 in etcd, storedVersions [v1beta1],
// every field as it was in every version served, nothing written but the Gadgets and the
// CRD's status, nothing written by the operator, and a second run writing nothing.
func TestMigrateStoresEveryObjectInTheStorageVersion(t *testing.T) {
	fasttier.Skip(t)
	for _, tc := range []struct {
		name string
		// interruptAfter is how many rewrites the first run makes before its context is
		// cancelled; 0 for none.
		interruptAfter int
		// unserve stops serving v1alpha1 when v1beta1 becomes the storage version.
		unserve bool
		// declared has a manager migrate as it starts (reconcile.WithStorageMigration)
		// instead of a call, its first failFirst rewrites answered 503.
		declared  bool
		failFirst int
	}{
		{name: "objects stored in the old version are rewritten in the new one"},
		{name: "a migration interrupted midway is finished by running it again", interruptAfter: objects * 2 / 5},
		{name: "managedFields of a version no longer served are removed", unserve: true},
		{name: "a manager migrates its kind as it starts when its declaration says so, again after a failure", declared: true, failFirst: 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startOldGadgets(t)
			want := s.read(t, !tc.unserve)
			wantCleaned := 0
			for _, g := range want {
				if slices.ContainsFunc(g.managed, func(e metav1.ManagedFieldsEntry) bool { return e.APIVersion == v1alpha1.GroupVersion.String() }) {
					wantCleaned++
				}
			}
			s.switchStorage(t, tc.unserve)
			if n := s.storedAs(t, "g-", v1alpha1.GroupVersion.String()); n != objects {
				t.Fatalf("before the migration, %d Gadgets are stored as v1alpha1, want %d", n, objects)
			}
			var migration reconciletest.Counter
			s.operator.Reset()
			s.defaulted.Store(0)
			cfg := migration.Wrap(s.cp.Config)
			if tc.interruptAfter > 0 {
				ctx, cancel := context.WithCancel(t.Context())
				var patches atomic.Int64
				interrupted := reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
					if r.Verb == "patch" && patches.Add(1) == int64(tc.interruptAfter) {
						defer cancel()
					}
					return r.Send()
				})
				start := time.Now()
				res, err := storage.Migrate(ctx, interrupted, s.crd)
				cancel()
				if !storage.IsIncomplete(err) || !errors.Is(err, context.Canceled) {
					t.Fatalf("an interrupted migration: %v, want an incomplete one, cancelled", err)
				}
				if got := s.storedVersions(t); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
					t.Errorf("after an interrupted migration, storedVersions %v, want [v1alpha1 v1beta1]", got)
				}
				t.Logf("interrupted after %v, %d of %d objects rewritten: %v", time.Since(start).Round(time.Millisecond), res.Rewritten, objects, err)
				if res.Rewritten < tc.interruptAfter-8 || res.Rewritten >= objects {
					t.Errorf("the interrupted run rewrote %d objects, want about %d", res.Rewritten, tc.interruptAfter)
				}
			}
			// The objects still stored as v1alpha1, canaries written before the API server
			// stored v1beta1 included: exactly those are to be stored again, none twice.
			wantRewritten := s.storedAs(t, "", v1alpha1.GroupVersion.String())
			start := time.Now()
			var res storage.Result
			if tc.declared {
				spec := reconcile.Manager{Options: ctrl.Options{Scheme: s.c.Scheme()}, Controllers: []reconcile.Declaration{reconcile.For(&v1beta1.Gadget{},
					reconcile.LogicFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "gadget-operator", reconcile.WithStorageMigration())}}
				var failed atomic.Int64
				failing := reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
					if r.Verb == "patch" && failed.Add(1) <= int64(tc.failFirst) {
						return r.Fail(http.StatusServiceUnavailable, "the API server is overloaded"), nil
					}
					return r.Send()
				})
				reconciletest.StartManager(t, failing, spec)
				reconciletest.Eventually(t, func(context.Context) error {
					if got := s.storedVersions(t); !slices.Equal(got, []string{"v1beta1"}) {
						return fmt.Errorf("storedVersions %v", got)
					}
					return nil
				})
				// The first run, its first rewrites failed, leaves storedVersions; only a second
				// run, which rewrites every object again, can trim it.
				if n := failed.Load(); n < 2*objects {
					t.Errorf("%d rewrites sent, want two runs' (%d at least): a failed migration is run again", n, 2*objects)
				}
				res = storage.Result{Objects: wantRewritten, Rewritten: wantRewritten, StoredVersions: s.storedVersions(t)} // for the checks below
				t.Logf("the manager migrated %d objects within %v of its start", wantRewritten, time.Since(start).Round(time.Millisecond))
			} else {
				var err error
				if res, err = storage.Migrate(t.Context(), cfg, s.crd); err != nil {
					t.Fatalf("the migration: %v", err)
				}
				t.Logf("migrated %d objects in %v: %+v", res.Objects, time.Since(start).Round(time.Millisecond), res)
			}

			// A rerun stores again only what an interrupted run did not.
			if res.Rewritten != wantRewritten {
				t.Errorf("%d rewrites stored, want %d: one for each object stored as v1alpha1", res.Rewritten, wantRewritten)
			}
			if tc.unserve && res.Cleaned != wantCleaned {
				t.Errorf("%d objects cleaned, want %d: those with a v1alpha1 managedFields entry", res.Cleaned, wantCleaned)
			}
			if !slices.Equal(res.StoredVersions, []string{"v1beta1"}) || !slices.Equal(s.storedVersions(t), []string{"v1beta1"}) {
				t.Errorf("storedVersions %v (result %v), want [v1beta1]", s.storedVersions(t), res.StoredVersions)
			}
			if n := s.storedAs(t, "g-", v1beta1.GroupVersion.String()); n != objects {
				t.Errorf("%d Gadgets are stored as v1beta1 in etcd, want %d", n, objects)
			}
			got := s.read(t, !tc.unserve)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(fields{}), cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".managed" || p.Last().String() == ".resourceVersion"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("the Gadgets changed (-before +after):\n%s", diff)
			}
			for name, g := range got {
				if len(g.managed) == 0 {
					t.Errorf("%s has no managedFields left: its next server-side apply would own every field", name)
				}
				for _, e := range g.managed {
					if tc.unserve && e.APIVersion == v1alpha1.GroupVersion.String() {
						t.Errorf("%s keeps a managedFields entry of v1alpha1, which is no longer served: %+v", name, e)
						break
					}
				}
			}

			allowed := migration.Count("patch", "gadgets/status") + migration.Count("patch", "gadgets") + migration.Count("update", "customresourcedefinitions/status")
			if migration.Writes() != allowed || migration.Count("update", "customresourcedefinitions/status") == 0 {
				t.Errorf("the migration wrote other than the Gadgets and the CRD's status:\n%s", migration.String())
			}
			if n := s.operator.Writes(); n > 0 {
				t.Errorf("the operator made %d writes while its Gadgets were migrated:\n%s", n, s.operator.String())
			}
			if n := s.defaulted.Load(); n > 0 && !tc.unserve {
				t.Errorf("the defaulting webhook was called %d times by a migration that writes only status", n)
			}

			reconciletest.ExpectNoWrites(t, &migration, func() {
				again, err := storage.Migrate(t.Context(), cfg, s.crd)
				if err != nil || again.Rewritten != 0 || again.Cleaned != 0 || again.Objects < objects {
					t.Errorf("a second run: %+v, %v; want every object, none rewritten or cleaned", again, err)
				}
			})
			if tc.unserve {
				// What managedFields of a version no longer served break
				// (kubernetes/kubernetes#111937).
				applied := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": v1beta1.GroupVersion.String(), "kind": "Gadget",
					"metadata": map[string]any{"namespace": s.ns, "name": "g-0001"},
					"spec":     map[string]any{"mode": "applied"},
				}}
				if err := s.c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner("gadget-cli"), client.ForceOwnership); err != nil {
					t.Errorf("a server-side apply after the migration: %v", err)
				}
			}
		})
	}
}

// oldGadgets is an API server whose Gadgets were written in v1alpha1, the storage
// version then, and the operator serving their conversion.
type oldGadgets struct {
	cp        *reconciletest.ControlPlane
	c         client.Client
	ns, crd   string
	operator  *reconciletest.Counter // the operator's requests
	defaulted atomic.Int64           // calls of its defaulting webhook
}

// startOldGadgets starts an API server whose Gadget CRD stores v1alpha1, the Gadget's
// operator serving its conversion and defaulting, and writes the Gadgets: each in
// v1alpha1 but every seventh, paused, in v1beta1 (which v1alpha1 keeps in an
// annotation); every tenth with a status.
func startOldGadgets(t *testing.T) *oldGadgets {
	t.Helper()
	cp, err := reconciletest.Start(t.Context(), reconciletest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, gadget.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	s := &oldGadgets{cp: cp, c: cp.Client(t, scheme), operator: &reconciletest.Counter{}}
	crd := gadget.CRD()
	s.crd = crd.Name
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == "v1alpha1"
	}
	if err := s.c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("the Gadget CRD is not established yet")
	})
	s.ns = cp.Namespace(t)

	spec := reconcile.Manager{Options: ctrl.Options{Scheme: scheme}, Controllers: []reconcile.Declaration{reconcile.For(&v1beta1.Gadget{},
		reconcile.LogicFunc[*v1beta1.Gadget](func(context.Context, *v1beta1.Gadget, reconcile.Scope) requeue.Outcome { return requeue.Done() }), "gadget-operator",
	).
		WithDefaulter(webhook.DefaulterFunc[*v1beta1.Gadget](func(_ context.Context, g *v1beta1.Gadget) error {
			s.defaulted.Add(1)
			if g.Spec.Mode == "" {
				g.Spec.Mode = "standard"
			}
			return nil
		})).
		WithConversion(gadget.Spoke())}}
	hooks := cp.ServeWebhooks(t, &spec, s.ns)
	reconciletest.StartManager(t, s.operator.Wrap(cp.Config), spec)
	hooks.Await(t)

	start := time.Now()
	if failed, err := gadget.WriteOld(t.Context(), s.c, s.ns, objects, 16); err != nil {
		t.Fatalf("%d Gadgets not written, the first: %v", failed, err)
	}
	t.Logf("%d Gadgets written as v1alpha1 in %v", objects, time.Since(start).Round(time.Millisecond))
	return s
}

// fields are what a Gadget holds in both versions, read through the API server.
type fields struct {
	UID         string
	Labels      map[string]string
	Annotations map[string]string // the hub's
	Hub         v1beta1.GadgetSpec
	HubStatus   v1beta1.GadgetStatus
	Spoke       *v1alpha1.GadgetSpec // nil if v1alpha1 is not read
	SpokeStatus *v1alpha1.GadgetStatus

	managed         []metav1.ManagedFieldsEntry
	resourceVersion string
}

// read reads every Gadget in v1beta1, and in v1alpha1 too if spoke.
func (s *oldGadgets) read(t *testing.T, spoke bool) map[string]fields {
	t.Helper()
	hubs := &v1beta1.GadgetList{}
	if err := s.c.List(t.Context(), hubs, client.InNamespace(s.ns)); err != nil {
		t.Fatalf("listing the Gadgets as v1beta1: %v", err)
	}
	got := map[string]fields{}
	for _, g := range hubs.Items {
		if !strings.HasPrefix(g.Name, "g-") {
			continue // a canary
		}
		got[g.Name] = fields{UID: string(g.UID), Labels: g.Labels, Annotations: g.Annotations, Hub: g.Spec, HubStatus: g.Status,
			managed: g.ManagedFields, resourceVersion: g.ResourceVersion}
	}
	if len(got) != objects {
		t.Fatalf("%d Gadgets listed as v1beta1, want %d", len(got), objects)
	}
	if !spoke {
		return got
	}
	spokes := &v1alpha1.GadgetList{}
	if err := s.c.List(t.Context(), spokes, client.InNamespace(s.ns)); err != nil {
		t.Fatalf("listing the Gadgets as v1alpha1: %v", err)
	}
	for _, g := range spokes.Items {
		f, ok := got[g.Name]
		if !ok {
			continue
		}
		f.Spoke, f.SpokeStatus = &g.Spec, &g.Status
		got[g.Name] = f
	}
	return got
}

// switchStorage makes v1beta1 the storage version, v1alpha1 no longer served if
// unserve, and returns once the API server stores new writes as v1beta1.
func (s *oldGadgets) switchStorage(t *testing.T, unserve bool) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := s.c.Get(t.Context(), client.ObjectKey{Name: s.crd}, crd); err != nil {
		t.Fatal(err)
	}
	for i, v := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = v.Name == "v1beta1"
		if unserve && v.Name == "v1alpha1" {
			crd.Spec.Versions[i].Served = false
		}
	}
	if err := s.c.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	// The API server switches its storage a moment after the CRD changes: a canary
	// written before that would be stored as v1alpha1.
	reconciletest.Eventually(t, func(ctx context.Context) error {
		canary := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, GenerateName: "canary-"}}
		if err := s.c.Create(ctx, canary); err != nil {
			return err
		}
		stored, err := s.cp.Stored(ctx, s.key(canary.Name))
		if err != nil {
			return err
		}
		if v := stored[s.key(canary.Name)]["apiVersion"]; v != v1beta1.GroupVersion.String() {
			return fmt.Errorf("a new Gadget is stored as %v", v)
		}
		return nil
	})
}

// key is where etcd keeps the Gadget name.
func (s *oldGadgets) key(name string) string {
	return "/registry/" + v1beta1.GroupVersion.Group + "/gadgets/" + s.ns + "/" + name
}

// storedAs returns how many of the Gadgets whose names begin with prefix etcd stores in
// apiVersion, failing the test if one is stored as v1beta1 with the annotation
// conversions keep v1beta1 in.
func (s *oldGadgets) storedAs(t *testing.T, prefix, apiVersion string) int {
	t.Helper()
	stored, err := s.cp.Stored(t.Context(), s.key(prefix))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for key, obj := range stored {
		if obj["apiVersion"] != apiVersion {
			continue
		}
		n++
		annotations, _ := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
		if _, ok := annotations[webhook.KeptAnnotation]; ok && apiVersion == v1beta1.GroupVersion.String() {
			t.Errorf("%s is stored as v1beta1 with annotation %s", key, webhook.KeptAnnotation)
		}
	}
	return n
}

func (s *oldGadgets) storedVersions(t *testing.T) []string {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := s.c.Get(t.Context(), client.ObjectKey{Name: s.crd}, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// A CRD that does not exist is an error the API server's NotFound recognises, and no
// migration left incomplete: nothing was started.
func TestMigrateOfAMissingCRDIsNotFoundNotIncomplete(t *testing.T) {
	cp := reconciletest.StartAPIServer(t)
	_, err := storage.Migrate(t.Context(), cp.Config, "nothings.example.com")
	if !apierrors.IsNotFound(err) || storage.IsIncomplete(err) {
		t.Errorf("Migrate of a missing CRD: %v; want NotFound, not incomplete", err)
	}
}
