package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cachev1alpha1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// serveWebhooks runs the Memcached operator with its webhooks (controller.Webhooks), as
// cmd/main.go does, on the tests' control plane, for a namespace of its own; it returns
// the namespace and a client of both versions that records the warnings it receives. The
// CRD converts through the operator until the test ends: the Memcached's CRD has one
// conversion webhook, which the API server calls only for v1alpha1, and only this test
// reads or writes v1alpha1.
func serveWebhooks(t *testing.T) (string, client.Client, *reconciletest.Warnings) {
	t.Helper()
	reconciletest.SkipShort(t) // it uses the control plane without an Env
	cp := operator.ControlPlane
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, cachev1alpha1.AddToScheme, cachev1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	ns := cp.Namespace(t)
	reader, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	spec := reconcile.Manager{Options: ctrl.Options{Scheme: scheme},
		Controllers: []reconcile.Declaration{controller.WithWebhooks(controller.New(), reader)}}
	hooks := cp.ServeWebhooks(t, &spec, ns)
	reconciletest.StartManager(t, cp.Config, spec)
	hooks.Await(t)

	w := &reconciletest.Warnings{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return ns, c, w
}

// TestWebhooksOfTheMemcached runs the operator's webhooks against the API server: what
// they default, refuse and warn of, through either version, and the conversion between
// the versions, read back from etcd.
func TestWebhooksOfTheMemcached(t *testing.T) {
	ns, c, warned := serveWebhooks(t)
	ctx := t.Context()
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	get := func(t *testing.T, name string) *cachev1beta1.Memcached {
		t.Helper()
		mc := &cachev1beta1.Memcached{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, mc); err != nil {
			t.Fatal(err)
		}
		return mc
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "labelled", Labels: map[string]string{controller.ConfigMapLabel: ""}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"}},
	} {
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	ref := func(name string) *cachev1beta1.ConfigMapReference {
		return &cachev1beta1.ConfigMapReference{Name: name}
	}

	t.Run("defaulting", func(t *testing.T) {
		for _, tt := range []struct {
			name       string
			obj        client.Object
			wantMemory int32
		}{
			{name: "v1beta1 without a memory limit", wantMemory: 64,
				obj: &cachev1beta1.Memcached{ObjectMeta: meta("default-beta"), Spec: cachev1beta1.MemcachedSpec{Replicas: 1}}},
			{name: "v1beta1 with one keeps it", wantMemory: 128,
				obj: &cachev1beta1.Memcached{ObjectMeta: meta("set-beta"), Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{MemoryLimitMiB: 128}}}},
			// v1alpha1 has no field for it: the webhook defaults the object converted to v1beta1.
			{name: "v1alpha1, which has no field for it", wantMemory: 64,
				obj: &cachev1alpha1.Memcached{ObjectMeta: meta("default-alpha"), Spec: cachev1alpha1.MemcachedSpec{Size: 1}}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if err := c.Create(ctx, tt.obj); err != nil {
					t.Fatal(err)
				}
				got := get(t, tt.obj.GetName())
				if got.Spec.Server.MemoryLimitMiB != tt.wantMemory || got.Spec.Server.Port != 11211 {
					t.Errorf("spec.server %+v, want memoryLimitMiB %d and port 11211", got.Spec.Server, tt.wantMemory)
				}
			})
		}
	})

	t.Run("validation", func(t *testing.T) {
		const (
			unlabelled = `admission webhook "validate.memcacheds.cache.example.com" denied the request: Memcached.cache.example.com "%s" is invalid: spec.server.configMapRef.name: Invalid value: "unlabelled": ConfigMap ` +
				`%s/unlabelled lacks the label cache.example.com/memcached-config, without which the operator does not see it: label it, or name another`
			absent = "spec.server.configMapRef.name: ConfigMap %s/absent does not exist yet: the Memcached waits for it, which must carry the label cache.example.com/memcached-config"
		)
		for _, tt := range []struct {
			name        string
			obj         client.Object
			wantErr     string // with the object's name and the namespace
			wantWarning string // with the namespace
		}{
			{name: "a labelled ConfigMap is accepted",
				obj: &cachev1beta1.Memcached{ObjectMeta: meta("labelled"), Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{ConfigMapRef: ref("labelled")}}}},
			{name: "a ConfigMap without the label is refused, naming the field", wantErr: unlabelled,
				obj: &cachev1beta1.Memcached{ObjectMeta: meta("unlabelled"), Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{ConfigMapRef: ref("unlabelled")}}}},
			{name: "through v1alpha1 too", wantErr: unlabelled,
				obj: &cachev1alpha1.Memcached{ObjectMeta: meta("unlabelled-alpha"), Spec: cachev1alpha1.MemcachedSpec{Size: 1, ConfigMapName: "unlabelled"}}},
			{name: "a ConfigMap that does not exist yet is accepted with a warning", wantWarning: absent,
				obj: &cachev1beta1.Memcached{ObjectMeta: meta("absent"), Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{ConfigMapRef: ref("absent")}}}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				warned.Take()
				err := c.Create(ctx, tt.obj)
				switch want := strings.ReplaceAll(strings.ReplaceAll(tt.wantErr, `"%s"`, `"`+tt.obj.GetName()+`"`), "%s", ns); {
				case want == "" && err != nil:
					t.Fatalf("refused: %v", err)
				case want != "" && (!apierrors.IsInvalid(err) || err.Error() != want):
					t.Fatalf("got %v\nwant Invalid: %s", err, want)
				}
				if got, want := strings.Join(warned.Take(), "; "), strings.ReplaceAll(tt.wantWarning, "%s", ns); got != want {
					t.Errorf("warnings %q, want %q", got, want)
				}
			})
		}
		t.Run("an update that keeps the reference is not checked again", func(t *testing.T) {
			mc := get(t, "absent")
			unlabelled := &corev1.ConfigMap{ObjectMeta: meta("absent")}
			if err := c.Create(ctx, unlabelled); err != nil {
				t.Fatal(err)
			}
			// Patches, which the operator's status writes in between do not conflict with.
			before := mc.DeepCopy()
			mc.Spec.Replicas = 2
			if err := c.Patch(ctx, mc, client.MergeFrom(before)); err != nil {
				t.Errorf("scaling a Memcached whose ConfigMap has no label: %v; want it accepted (the controller reports it Stalled)", err)
			}
			before = mc.DeepCopy()
			mc.Spec.Server.ConfigMapRef = ref("unlabelled")
			if err := c.Patch(ctx, mc, client.MergeFrom(before)); !apierrors.IsInvalid(err) {
				t.Errorf("naming another unlabelled ConfigMap: %v; want it refused", err)
			}
		})
	})

	t.Run("conversion", func(t *testing.T) {
		hub := &cachev1beta1.Memcached{ObjectMeta: meta("stored"), Spec: cachev1beta1.MemcachedSpec{Replicas: 2,
			Server: cachev1beta1.MemcachedServer{Port: 11300, MemoryLimitMiB: 256, ConfigMapRef: ref("labelled")}}}
		if err := c.Create(ctx, hub); err != nil {
			t.Fatal(err)
		}
		old := &cachev1alpha1.Memcached{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(hub), old); err != nil {
			t.Fatalf("a v1alpha1 read of a v1beta1-stored Memcached: %v", err)
		}
		if want := (cachev1alpha1.MemcachedSpec{Size: 2, ContainerPort: 11300, ConfigMapName: "labelled"}); old.Spec != want {
			t.Errorf("read as v1alpha1: spec %+v, want %+v", old.Spec, want)
		}
		if _, ok := old.Annotations[webhook.KeptAnnotation]; !ok {
			t.Errorf("read as v1alpha1, the Memcached lacks %s, which keeps what v1alpha1 has no field for", webhook.KeptAnnotation)
		}
		// A whole-object update in v1alpha1, read again when the operator's status write
		// got in between: the memory limit must survive it through the kept annotation.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(hub), old); err != nil {
				return err
			}
			old.Spec.Size = 3
			return c.Update(ctx, old)
		})
		if err != nil {
			t.Fatalf("a v1alpha1 update: %v", err)
		}
		got := get(t, "stored")
		want := hub.Spec
		want.Replicas = 3
		if got.Spec.Replicas != want.Replicas || got.Spec.Server.Port != want.Server.Port || got.Spec.Server.MemoryLimitMiB != want.Server.MemoryLimitMiB ||
			got.Spec.Server.ConfigMapRef == nil || *got.Spec.Server.ConfigMapRef != *want.Server.ConfigMapRef {
			t.Errorf("after a v1alpha1 update, v1beta1 spec %+v, want %+v: the memory limit kept, which v1alpha1 has no field for", got.Spec, want)
		}

		created := &cachev1alpha1.Memcached{ObjectMeta: meta("created-alpha"), Spec: cachev1alpha1.MemcachedSpec{Size: 1, ContainerPort: 11400, ConfigMapName: "labelled"}}
		if err := c.Create(ctx, created); err != nil {
			t.Fatalf("a v1alpha1 create: %v", err)
		}

		// What etcd holds: both in v1beta1, without the annotation of v1alpha1 reads.
		stored, err := operator.ControlPlane.Stored(ctx, "/registry/cache.example.com/memcacheds/"+ns+"/")
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]map[string]any{
			"stored":        {"replicas": int64(3), "server": map[string]any{"port": int64(11300), "memoryLimitMiB": int64(256), "configMapRef": map[string]any{"name": "labelled"}}},
			"created-alpha": {"replicas": int64(1), "server": map[string]any{"port": int64(11400), "memoryLimitMiB": int64(64), "configMapRef": map[string]any{"name": "labelled"}}},
		} {
			obj, ok := stored["/registry/cache.example.com/memcacheds/"+ns+"/"+name]
			if !ok {
				t.Errorf("etcd holds no Memcached %s", name)
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			spec, _, _ := unstructured.NestedMap(obj, "spec")
			if u.GetAPIVersion() != "cache.example.com/v1beta1" || !equalJSON(spec, want) {
				t.Errorf("etcd holds %s as %s with spec %v; want v1beta1 with spec %v", name, u.GetAPIVersion(), spec, want)
			}
			if _, ok := u.GetAnnotations()[webhook.KeptAnnotation]; ok {
				t.Errorf("etcd holds %s with annotation %s", name, webhook.KeptAnnotation)
			}
		}
	})
}

// TestChildrenMadeForV1alpha1AreLeftAsTheyAre: the Deployment and Service of a Memcached,
// made as the operator of v1alpha1 alone made them (controlled through a v1alpha1 owner
// reference), are the v1beta1 controller's already: it writes nothing of either but the
// label its cache holds its children by (ownership.OwnedByLabel), which they lacked.
func TestChildrenMadeForV1alpha1AreLeftAsTheyAre(t *testing.T) {
	ns, c, _ := serveWebhooks(t)
	ctx := t.Context()
	// Suspended, so that the v1beta1 controller makes nothing before the old children exist.
	mc := &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upgraded"},
		Spec: cachev1beta1.MemcachedSpec{Replicas: 2, Suspend: true}}
	if err := c.Create(ctx, mc); err != nil {
		t.Fatal(err)
	}
	old := &cachev1alpha1.Memcached{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(mc), old); err != nil {
		t.Fatal(err)
	}
	// What the operator of v1alpha1 wrote: the same desired objects, owned through v1alpha1.
	w := ownership.Writer{Client: c, FieldOwner: "memcached-operator"}
	dep, _, err := ownership.Ensure(ctx, w, old, controller.Deployment(mc))
	if err != nil {
		t.Fatal(err)
	}
	svc, _, err := ownership.Ensure(ctx, w, old, controller.Service(mc))
	if err != nil {
		t.Fatal(err)
	}

	before := mc.DeepCopy()
	mc.Spec.Suspend = false
	if err := c.Patch(ctx, mc, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if mc.Status.ObservedGeneration != mc.Generation || conditions.IsTrue(mc, reconcile.Paused) || mc.Status.Selector == "" {
			return fmt.Errorf("the resumed Memcached is not reconciled yet: %+v", mc.Status)
		}
		return nil
	})
	gotDep, gotSvc := &appsv1.Deployment{}, &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(dep), gotDep); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(svc), gotSvc); err != nil {
		t.Fatal(err)
	}
	// The Deployment's status and revision annotation move with its pods (the deployment
	// controller's); its spec, owner and what the operator applied must not.
	intent := ownership.IntentAnnotation
	labelled := func(l map[string]string) map[string]string {
		out := map[string]string{ownership.OwnedByLabel: "memcached.cache.example.com"}
		for k, v := range l {
			out[k] = v
		}
		return out
	}
	if gotDep.Generation != dep.Generation || !equality.Semantic.DeepEqual(gotDep.OwnerReferences, dep.OwnerReferences) ||
		gotDep.Annotations[intent] != dep.Annotations[intent] || !equality.Semantic.DeepEqual(gotDep.Labels, labelled(dep.Labels)) {
		t.Errorf("the v1beta1 controller rewrote the Deployment: generation %d -> %d, owners %+v -> %+v, %s %s -> %s, labels %v -> %v",
			dep.Generation, gotDep.Generation, dep.OwnerReferences, gotDep.OwnerReferences, intent, dep.Annotations[intent], gotDep.Annotations[intent], dep.Labels, gotDep.Labels)
	}
	if !equality.Semantic.DeepEqual(gotSvc.OwnerReferences, svc.OwnerReferences) || gotSvc.Annotations[intent] != svc.Annotations[intent] ||
		!equality.Semantic.DeepEqual(gotSvc.Labels, labelled(svc.Labels)) || !equality.Semantic.DeepEqual(gotSvc.Spec, svc.Spec) {
		t.Errorf("the v1beta1 controller rewrote the Service: owners %+v -> %+v, labels %v -> %v", svc.OwnerReferences, gotSvc.OwnerReferences, svc.Labels, gotSvc.Labels)
	}
}

// equalJSON compares two decoded JSON values, whatever type their numbers decoded as.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if !equalJSON(v, b[k]) {
				return false
			}
		}
		return true
	case int64, float64, int:
		return toFloat(a) == toFloat(b)
	default:
		return a == b
	}
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case int:
		return float64(v)
	case float64:
		return v
	}
	return -1
}
