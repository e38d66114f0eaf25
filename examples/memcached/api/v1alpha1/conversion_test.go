package v1alpha1_test

import (
	"context"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	cachev1alpha1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1alpha1"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// rounds is how many random Memcacheds each direction converts.
const rounds = 2000

// TestConversionRoundTripsLoseNothing converts random Memcacheds, filled by apimachinery's
// fuzzer (metadata, conditions and every spec field, pointers nil or not), through the
// other version and back: v1beta1 -> v1alpha1 -> v1beta1 gives the hub back whole, the
// memory limit and an empty ConfigMap reference included, which v1alpha1 has no field for;
// v1alpha1 -> v1beta1 -> v1alpha1 gives the spoke back whole but for the annotation that
// carries the hub.
func TestConversionRoundTripsLoseNothing(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	f := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(rand.Int63()), serializer.NewCodecFactory(scheme)).NilChance(0.3)
	for i := range rounds {
		hub := &cachev1beta1.Memcached{}
		f.Fill(hub)
		delete(hub.Annotations, webhook.KeptAnnotation)
		spoke, back := &cachev1alpha1.Memcached{}, &cachev1beta1.Memcached{}
		if err := cachev1alpha1.FromHub(ctx, hub.DeepCopy(), spoke); err != nil {
			t.Fatal(err)
		}
		if err := cachev1alpha1.ToHub(ctx, spoke, back); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(hub, back) {
			t.Fatalf("round %d: v1beta1 -> v1alpha1 -> v1beta1:\n got %+v\nwant %+v", i, back.Spec, hub.Spec)
		}

		spoke = &cachev1alpha1.Memcached{}
		f.Fill(spoke)
		delete(spoke.Annotations, webhook.KeptAnnotation)
		hub, again := &cachev1beta1.Memcached{}, &cachev1alpha1.Memcached{}
		if err := cachev1alpha1.ToHub(ctx, spoke.DeepCopy(), hub); err != nil {
			t.Fatal(err)
		}
		if err := cachev1alpha1.FromHub(ctx, hub, again); err != nil {
			t.Fatal(err)
		}
		if _, ok := again.Annotations[webhook.KeptAnnotation]; !ok {
			t.Fatalf("round %d: converted to v1alpha1 without %s", i, webhook.KeptAnnotation)
		}
		delete(again.Annotations, webhook.KeptAnnotation)
		if !equality.Semantic.DeepEqual(spoke, again) {
			t.Fatalf("round %d: v1alpha1 -> v1beta1 -> v1alpha1:\n got %+v\nwant %+v", i, again.Spec, spoke.Spec)
		}
	}
}

// TestConversionMapsEachField names where each field goes, and what a v1alpha1 client's
// change does to what v1alpha1 has no field for.
func TestConversionMapsEachField(t *testing.T) {
	ctx := context.Background()
	ref := func(name string) *cachev1beta1.ConfigMapReference {
		return &cachev1beta1.ConfigMapReference{Name: name}
	}
	for _, tt := range []struct {
		name   string
		hub    cachev1beta1.MemcachedSpec     // converted to v1alpha1
		change func(*cachev1alpha1.Memcached) // what a v1alpha1 client then changes
		want   cachev1beta1.MemcachedSpec     // converted back
		spoke  cachev1alpha1.MemcachedSpec    // the v1alpha1 read
	}{
		{name: "every field",
			hub:   cachev1beta1.MemcachedSpec{Replicas: 2, Server: cachev1beta1.MemcachedServer{Port: 11300, MemoryLimitMiB: 256, ConfigMapRef: ref("args")}, Suspend: true},
			spoke: cachev1alpha1.MemcachedSpec{Size: 2, ContainerPort: 11300, ConfigMapName: "args", Suspend: true},
			want:  cachev1beta1.MemcachedSpec{Replicas: 2, Server: cachev1beta1.MemcachedServer{Port: 11300, MemoryLimitMiB: 256, ConfigMapRef: ref("args")}, Suspend: true}},
		{name: "a v1alpha1 client's change wins; the memory limit stays",
			hub:    cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{Port: 11211, MemoryLimitMiB: 128, ConfigMapRef: ref("args")}},
			spoke:  cachev1alpha1.MemcachedSpec{Size: 1, ContainerPort: 11211, ConfigMapName: "args"},
			change: func(mc *cachev1alpha1.Memcached) { mc.Spec.Size, mc.Spec.ConfigMapName = 3, "other" },
			want:   cachev1beta1.MemcachedSpec{Replicas: 3, Server: cachev1beta1.MemcachedServer{Port: 11211, MemoryLimitMiB: 128, ConfigMapRef: ref("other")}}},
		{name: "a v1alpha1 client that removes the ConfigMap removes the reference",
			hub:    cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{ConfigMapRef: ref("args")}},
			spoke:  cachev1alpha1.MemcachedSpec{Size: 1, ConfigMapName: "args"},
			change: func(mc *cachev1alpha1.Memcached) { mc.Spec.ConfigMapName = "" },
			want:   cachev1beta1.MemcachedSpec{Replicas: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spoke, back := &cachev1alpha1.Memcached{}, &cachev1beta1.Memcached{}
			if err := cachev1alpha1.FromHub(ctx, &cachev1beta1.Memcached{Spec: tt.hub}, spoke); err != nil {
				t.Fatal(err)
			}
			if spoke.Spec != tt.spoke {
				t.Errorf("read as v1alpha1: %+v, want %+v", spoke.Spec, tt.spoke)
			}
			if tt.change != nil {
				tt.change(spoke)
			}
			if err := cachev1alpha1.ToHub(ctx, spoke, back); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(back.Spec, tt.want) {
				t.Errorf("back as v1beta1: %+v, want %+v", back.Spec, tt.want)
			}
			if _, ok := back.Annotations[webhook.KeptAnnotation]; ok {
				t.Errorf("the hub carries %s", webhook.KeptAnnotation)
			}
		})
	}
}
