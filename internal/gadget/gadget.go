// Package gadget is a kind with two versions, made in Go for the tests of webhooks and
// conversion: v1beta1 stored, the hub; v1alpha1 a spoke that renames a field and lacks
// another.
package gadget

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/reconcilekit/reconcilekit/internal/gadget/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/webhook"
)

// AddToScheme adds both versions to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	if err := v1alpha1.AddToScheme(s); err != nil {
		return err
	}
	return v1beta1.AddToScheme(s)
}

// Spoke converts v1alpha1 to and from the hub, v1beta1, losing nothing.
func Spoke() conversion.SpokeConverter[*v1beta1.Gadget] {
	return conversion.NewSpokeConverter(&v1alpha1.Gadget{}, FromHub, ToHub)
}

// ToHub converts a v1alpha1 Gadget to v1beta1: size becomes replicas; paused is what the
// hub it was converted from had.
func ToHub(_ context.Context, src *v1alpha1.Gadget, dst *v1beta1.Gadget) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = v1beta1.GadgetSpec{Replicas: src.Spec.Size, Mode: src.Spec.Mode}
	dst.Status = v1beta1.GadgetStatus{Phase: src.Status.Phase}
	return webhook.Restore(src, dst, func(kept *v1beta1.Gadget) { dst.Spec.Paused = kept.Spec.Paused })
}

// FromHub converts a v1beta1 Gadget to v1alpha1, keeping what v1alpha1 has no room for.
func FromHub(_ context.Context, src *v1beta1.Gadget, dst *v1alpha1.Gadget) error {
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = v1alpha1.GadgetSpec{Size: src.Spec.Replicas, Mode: src.Spec.Mode}
	dst.Status = v1alpha1.GadgetStatus{Phase: src.Status.Phase}
	return webhook.Keep(src, dst)
}

// CRD returns the Gadget's CustomResourceDefinition: both versions served, v1beta1
// stored, no conversion webhook (the test sets it).
func CRD() *apiextensionsv1.CustomResourceDefinition {
	props := func(spec map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.CustomResourceValidation {
		return apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: spec},
				"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"phase": {Type: "string"},
				}},
			},
		}}
	}
	version := func(name string, storage bool, schema apiextensionsv1.CustomResourceValidation) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: storage, Schema: &schema,
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + v1beta1.GroupVersion.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: v1beta1.GroupVersion.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				version("v1alpha1", false, props(map[string]apiextensionsv1.JSONSchemaProps{
					"size": {Type: "integer", Format: "int32"}, "mode": {Type: "string"},
				})),
				version("v1beta1", true, props(map[string]apiextensionsv1.JSONSchemaProps{
					"replicas": {Type: "integer", Format: "int32"}, "mode": {Type: "string"}, "paused": {Type: "boolean"},
				})),
			},
		},
	}
}

// WriteOld creates n Gadgets in namespace, named g-0000 on and labelled with their index, as
// a cluster holds them before a storage migration: each in v1alpha1 but every seventh, paused,
// in v1beta1 (which v1alpha1 keeps in an annotation); every tenth given a status. workers
// create at once. It returns how many were not written and the first error.
func WriteOld(ctx context.Context, c client.Client, namespace string, n, workers int) (failed int, first error) {
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := writeOld(ctx, c, namespace, i); err != nil {
					mu.Lock()
					if failed++; first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return failed, first
}

// writeOld writes the i-th Gadget of WriteOld.
func writeOld(ctx context.Context, c client.Client, namespace string, i int) error {
	meta := metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("g-%04d", i), Labels: map[string]string{"index": strconv.Itoa(i)}}
	mode := []string{"standard", "legacy", "fast"}[i%3]
	var obj client.Object
	if i%7 == 0 {
		obj = &v1beta1.Gadget{ObjectMeta: meta, Spec: v1beta1.GadgetSpec{Replicas: int32(i%5 + 1), Mode: mode, Paused: true}}
	} else {
		obj = &v1alpha1.Gadget{ObjectMeta: meta, Spec: v1alpha1.GadgetSpec{Size: int32(i%5 + 1), Mode: mode}}
	}
	if err := c.Create(ctx, obj); err != nil {
		return err
	}
	if i%10 != 0 {
		return nil
	}
	old := &v1alpha1.Gadget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), old); err != nil {
		return err
	}
	old.Status.Phase = "Running"
	return c.Status().Update(ctx, old)
}
