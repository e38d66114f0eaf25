package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// migratedGadgets is how many Gadgets the migration scenario writes in the old version:
// the 1,000 of the storage issue at full size.
func migratedGadgets() int {
	if *full {
		return 1000
	}
	return 100
}

// The Gadgets of a cluster, written while v1alpha1 was their storage version, are
// migrated to v1beta1 by storage.Migrate in a process of its own while their operator
// runs; the process is killed (SIGKILL) midway, and run again. At the end etcd holds
// every Gadget as v1beta1, storedVersions is [v1beta1], every field of every Gadget reads
// as before in both versions, and the operator wrote nothing: neither a Gadget nor the
// ConfigMap it keeps for each.
func TestStorageMigrationKilledMidwayAndResumedLosesNothingAndWritesNoChild(t *testing.T) {
	s := sized()
	n := migratedGadgets()
	g := startGadgets(t)
	if failed, err := gadget.WriteOld(t.Context(), g.c, g.ns, n, 8); err != nil {
		t.Fatalf("%d Gadgets not written, the first: %v", failed, err)
	}
	g.switchStorage(t)
	if stored := g.storedAs(t, v1alpha1.GroupVersion.String()); stored != n {
		t.Fatalf("before the migration, %d Gadgets are stored as v1alpha1, want %d", stored, n)
	}
	await(t, s.limit, g.converged)
	want := g.read(t)
	children := g.children(t)
	g.operator.Reset()
	reconciledBefore := reconciles("gadget")

	bin := filepath.Join(t.TempDir(), "migrate")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./testdata/migrate").CombinedOutput(); err != nil {
		t.Fatalf("building the migration: %v\n%s", err, out)
	}
	kubeconfig := kubeconfigFor(t, cp.Config)
	// One worker, so that the migration takes long enough to be killed in the middle of it.
	migrate := func() *exec.Cmd {
		cmd := exec.Command(bin, "-crd="+g.crd, "-workers=1", "-page-size=50")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		return cmd
	}

	start := time.Now()
	first := migrate()
	var out bytes.Buffer
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	t.Cleanup(func() { _ = first.Process.Kill() })
	// Killed once a third of the Gadgets are stored as v1beta1.
	await(t, s.limit, func(ctx context.Context) error {
		select {
		case err := <-exited:
			t.Fatalf("the migration ended (%v) before it was killed, too fast for this scenario:\n%s", err, out.String())
		default:
		}
		if migrated := g.storedAs(t, v1beta1.GroupVersion.String()); migrated < n/3 {
			return fmt.Errorf("%d of %d Gadgets migrated", migrated, n)
		}
		return nil
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the migration was not killed: %v\n%s", err, out.String())
	}
	killedAfter := time.Since(start)
	migrated := g.storedAs(t, v1beta1.GroupVersion.String())
	if migrated >= n {
		t.Fatalf("all %d Gadgets were migrated when the migration was killed: the scenario kills it too late", n)
	}
	if got := g.storedVersions(t); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
		t.Errorf("after the migration was killed, storedVersions %v, want [v1alpha1 v1beta1]", got)
	}

	resumed := time.Now()
	if out, err := migrate().CombinedOutput(); err != nil {
		t.Fatalf("the migration run again: %v\n%s", err, out)
	}
	t.Logf("%d Gadgets: the migration killed after %v, %d stored as v1beta1 then; run again, it finished in %v",
		n, killedAfter.Round(time.Millisecond), migrated, time.Since(resumed).Round(time.Millisecond))

	if got := g.storedAs(t, v1beta1.GroupVersion.String()); got != n {
		t.Errorf("%d Gadgets are stored as v1beta1 in etcd, want all %d", got, n)
	}
	if got := g.storedVersions(t); !slices.Equal(got, []string{"v1beta1"}) {
		t.Errorf("storedVersions %v, want [v1beta1]", got)
	}
	if diff := cmp.Diff(want, g.read(t)); diff != "" {
		t.Errorf("the Gadgets changed (-before +after):\n%s", diff)
	}
	// The operator saw every Gadget rewritten, and reconciled each: it must have found
	// nothing to do.
	await(t, s.limit, func(context.Context) error {
		if done := reconciles("gadget") - reconciledBefore; done < float64(n) {
			return fmt.Errorf("the operator reconciled %v times since the migration began, want %d at least: one for each Gadget rewritten", done, n)
		}
		return nil
	})
	t.Logf("the operator reconciled %v times meanwhile", reconciles("gadget")-reconciledBefore)
	if w := g.operator.Writes(); w > 0 {
		t.Errorf("the operator made %d writes while its Gadgets were migrated:\n%s", w, g.operator.String())
	}
	if diff := cmp.Diff(children, g.children(t)); diff != "" {
		t.Errorf("the Gadgets' ConfigMaps changed (-before +after resourceVersion):\n%s", diff)
	}
}

// gadgets is the Gadget kind installed in the cluster, v1alpha1 stored, and an operator
// that keeps a ConfigMap for each Gadget and serves the kind's conversion.
type gadgets struct {
	c        client.Client
	ns, crd  string
	operator *reconciletest.Counter
}

// gadgetChild is the ConfigMap the operator keeps for a Gadget: what its spec says.
func gadgetChild(gd *v1beta1.Gadget) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: gd.Namespace, Name: "gadget-" + gd.Name},
		Data: map[string]string{
			"replicas": strconv.Itoa(int(gd.Spec.Replicas)), "mode": gd.Spec.Mode, "paused": strconv.FormatBool(gd.Spec.Paused),
		},
	}
}

func startGadgets(t *testing.T) *gadgets {
	t.Helper()
	sch := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, gadget.AddToScheme} {
		if err := add(sch); err != nil {
			t.Fatal(err)
		}
	}
	g := &gadgets{c: cp.Client(t, sch), ns: cp.Namespace(t), operator: &reconciletest.Counter{}}
	crd := gadget.CRD()
	g.crd = crd.Name
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == "v1alpha1"
	}
	if err := g.c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	// Registered first, so run last: after the operator and its webhooks are gone.
	t.Cleanup(func() { _ = g.c.Delete(context.Background(), crd) })
	reconciletest.Eventually(t, func(ctx context.Context) error {
		list := &v1alpha1.GadgetList{}
		return g.c.List(ctx, list, client.InNamespace(g.ns))
	})

	spec := reconcile.Manager{
		Options: ctrl.Options{Scheme: sch, Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{g.ns: {}}}},
		Controllers: []reconcile.Declaration{reconcile.For(&v1beta1.Gadget{},
			reconcile.LogicFunc[*v1beta1.Gadget](func(ctx context.Context, gd *v1beta1.Gadget, s reconcile.Scope) requeue.Outcome {
				if _, _, err := ownership.Ensure(ctx, s.Writer, gd, gadgetChild(gd)); err != nil {
					return requeue.Retry(err)
				}
				return requeue.Done()
			}), "gadget-operator",
			reconcile.WithChildren(&corev1.ConfigMap{}),
		).
			WithConversion(gadget.Spoke())},
	}
	hooks := cp.ServeWebhooks(t, &spec, g.ns)
	reconciletest.StartManager(t, g.operator.Wrap(cp.Config), spec)
	hooks.Await(t)
	return g
}

// switchStorage makes v1beta1 the storage version and returns once the API server stores
// new writes as v1beta1.
func (g *gadgets) switchStorage(t *testing.T) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := g.c.Get(t.Context(), client.ObjectKey{Name: g.crd}, crd); err != nil {
		t.Fatal(err)
	}
	for i, v := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = v.Name == "v1beta1"
	}
	if err := g.c.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	// The API server switches a moment after the CRD changes. The canary is deleted at
	// once: the Gadgets compared are the scenario's alone.
	reconciletest.Eventually(t, func(ctx context.Context) error {
		canary := &v1beta1.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, GenerateName: "canary-"}}
		if err := g.c.Create(ctx, canary); err != nil {
			return err
		}
		defer func() { _ = g.c.Delete(ctx, canary) }()
		stored, err := cp.Stored(ctx, g.key(canary.Name))
		if err != nil {
			return err
		}
		if v := stored[g.key(canary.Name)]["apiVersion"]; v != v1beta1.GroupVersion.String() {
			return fmt.Errorf("a new Gadget is stored as %v", v)
		}
		return nil
	})
}

func (g *gadgets) key(name string) string {
	return "/registry/" + v1beta1.GroupVersion.Group + "/gadgets/" + g.ns + "/" + name
}

// storedAs returns how many of the scenario's Gadgets etcd holds in apiVersion.
func (g *gadgets) storedAs(t *testing.T, apiVersion string) int {
	t.Helper()
	stored, err := cp.Stored(t.Context(), g.key("g-"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, obj := range stored {
		if obj["apiVersion"] == apiVersion {
			n++
		}
	}
	return n
}

func (g *gadgets) storedVersions(t *testing.T) []string {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := g.c.Get(t.Context(), client.ObjectKey{Name: g.crd}, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// gadgetFields are what a Gadget holds, read in both versions.
type gadgetFields struct {
	UID                 string
	Labels, Annotations map[string]string // the hub's: the spoke's keep what it lacks
	Hub                 v1beta1.GadgetSpec
	HubStatus           v1beta1.GadgetStatus
	Spoke               v1alpha1.GadgetSpec
	SpokeStatus         v1alpha1.GadgetStatus
}

// read reads every Gadget of the scenario as v1beta1 and as v1alpha1.
func (g *gadgets) read(t *testing.T) map[string]gadgetFields {
	t.Helper()
	hubs, spokes := &v1beta1.GadgetList{}, &v1alpha1.GadgetList{}
	if err := errors.Join(g.c.List(t.Context(), hubs, client.InNamespace(g.ns)), g.c.List(t.Context(), spokes, client.InNamespace(g.ns))); err != nil {
		t.Fatalf("listing the Gadgets: %v", err)
	}
	got := map[string]gadgetFields{}
	for _, h := range hubs.Items {
		got[h.Name] = gadgetFields{UID: string(h.UID), Labels: h.Labels, Annotations: h.Annotations, Hub: h.Spec, HubStatus: h.Status}
	}
	for _, s := range spokes.Items {
		f := got[s.Name]
		f.Spoke, f.SpokeStatus = s.Spec, s.Status
		got[s.Name] = f
	}
	return got
}

// converged reports whether every Gadget has its ConfigMap, as its spec says.
func (g *gadgets) converged(ctx context.Context) error {
	hubs, cms := &v1beta1.GadgetList{}, &corev1.ConfigMapList{}
	if err := errors.Join(g.c.List(ctx, hubs, client.InNamespace(g.ns)), g.c.List(ctx, cms, client.InNamespace(g.ns))); err != nil {
		return err
	}
	have := map[string]map[string]string{}
	for _, cm := range cms.Items {
		have[cm.Name] = cm.Data
	}
	missing := 0
	for i := range hubs.Items {
		want := gadgetChild(&hubs.Items[i])
		if !cmp.Equal(have[want.Name], want.Data) {
			missing++
		}
	}
	if missing > 0 {
		return fmt.Errorf("%d of %d Gadgets lack their ConfigMap", missing, len(hubs.Items))
	}
	return nil
}

// children returns the resourceVersion of each Gadget's ConfigMap.
func (g *gadgets) children(t *testing.T) map[string]string {
	t.Helper()
	cms := &corev1.ConfigMapList{}
	if err := g.c.List(t.Context(), cms, client.InNamespace(g.ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "gadget-") {
			out[cm.Name] = cm.ResourceVersion
		}
	}
	return out
}
