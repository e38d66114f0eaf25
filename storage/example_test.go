package storage_test

import (
	"context"
	"fmt"
	"log"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/storage"
)

// Three Things are written while v1 is the storage version; then v2 is. Migrate stores
// them as v2, and v1 can leave storedVersions (and then the CRD). An operator calls it
// at start-up, before it starts its manager, or a Job runs it on demand.
func ExampleMigrate() {
	ctx := context.Background()
	cp, err := reconciletest.Start(ctx, reconciletest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		log.Fatal(err)
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		log.Fatal(err)
	}
	crd := thingsCRD()
	if err := c.Create(ctx, crd); err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		thing := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Thing",
			"metadata": map[string]any{"namespace": "default", "name": name},
			"spec":     map[string]any{"size": int64(1)},
		}}
		// The API server serves a new CRD a moment after it is created.
		for try := 0; ; try++ {
			err := c.Create(ctx, thing)
			if err == nil {
				break
			}
			if try == 100 {
				log.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
		log.Fatal(err)
	}
	crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = false, true
	if err := c.Update(ctx, crd); err != nil {
		log.Fatal(err)
	}
	fmt.Println("storedVersions", crd.Status.StoredVersions)
	// An operator runs long after its CRD changed; here the API server is given a moment
	// to store new writes as v2.
	time.Sleep(time.Second)

	res, err := storage.Migrate(ctx, cp.Config, crd.Name)
	if storage.IsIncomplete(err) {
		log.Fatalf("%v: running it again finishes it", err)
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d objects, %d rewritten; storedVersions %v\n", res.Objects, res.Rewritten, res.StoredVersions)

	res, err = storage.Migrate(ctx, cp.Config, crd.Name)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("again: %d objects, %d rewritten\n", res.Objects, res.Rewritten)
	// Output:
	// storedVersions [v1 v2]
	// 3 objects, 3 rewritten; storedVersions [v2]
	// again: 3 objects, 0 rewritten
}

// thingsCRD returns a CRD of two versions of one schema, so that the API server converts
// between them itself (conversion strategy None); v1 stored.
func thingsCRD() *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
		},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Schema: schema},
			},
		},
	}
}
