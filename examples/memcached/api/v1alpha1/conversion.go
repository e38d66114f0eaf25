package v1alpha1

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// Spoke converts v1alpha1 Memcacheds to and from the hub, v1beta1, losing nothing: the
// conversion the operator declares (reconcile.WithConversion) and serves at /convert.
func Spoke() conversion.SpokeConverter[*v1beta1.Memcached] {
	return conversion.NewSpokeConverter(&Memcached{}, FromHub, ToHub)
}

// ToHub converts a v1alpha1 Memcached to v1beta1: spec.size becomes spec.replicas,
// spec.containerPort spec.server.port and spec.configMapName spec.server.configMapRef.name.
// What v1beta1 has and v1alpha1 has no field for (spec.server.memoryLimitMiB, and a
// configMapRef whose name is empty) is what the hub it was converted from had, if it was.
func ToHub(_ context.Context, src *Memcached, dst *v1beta1.Memcached) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = v1beta1.MemcachedSpec{
		Replicas: src.Spec.Size,
		Server:   v1beta1.MemcachedServer{Port: src.Spec.ContainerPort},
		Suspend:  src.Spec.Suspend,
	}
	if src.Spec.ConfigMapName != "" {
		dst.Spec.Server.ConfigMapRef = &v1beta1.ConfigMapReference{Name: src.Spec.ConfigMapName}
	}
	dst.Status = v1beta1.MemcachedStatus(*src.Status.DeepCopy())
	return webhook.Restore(src, dst, func(kept *v1beta1.Memcached) {
		dst.Spec.Server.MemoryLimitMiB = kept.Spec.Server.MemoryLimitMiB
		// The reference as it was, unless the v1alpha1 client changed its name.
		if ref := kept.Spec.Server.ConfigMapRef; ref != nil && ref.Name == src.Spec.ConfigMapName {
			dst.Spec.Server.ConfigMapRef = ref.DeepCopy()
		}
	})
}

// FromHub converts a v1beta1 Memcached to v1alpha1, keeping what v1alpha1 has no field
// for in the annotation webhook.KeptAnnotation.
func FromHub(_ context.Context, src *v1beta1.Memcached, dst *Memcached) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = MemcachedSpec{
		Size:          src.Spec.Replicas,
		ContainerPort: src.Spec.Server.Port,
		Suspend:       src.Spec.Suspend,
	}
	if ref := src.Spec.Server.ConfigMapRef; ref != nil {
		dst.Spec.ConfigMapName = ref.Name
	}
	dst.Status = MemcachedStatus(*src.Status.DeepCopy())
	return webhook.Keep(src, dst)
}
