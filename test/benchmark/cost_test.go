package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// BenchmarkAPIServerCPU reports what one request costs the API server, in milliseconds of
// its CPU (apiserver-ms/op), for the requests an operator's convergence is made of: on a
// small machine the API server's CPU is what every component waits for, so these figures
// explain the convergence times. Requests are sent one at a time to an API server of the
// benchmark's own; its CPU (apiServerCPU, to 10 ms) is read over all b.N requests.
func BenchmarkAPIServerCPU(b *testing.B) {
	root, err := moduleRoot()
	if err != nil {
		b.Fatal(err)
	}
	cp := reconciletest.StartAPIServer(b, filepath.Join(root, "examples/memcached/config/crd/bases"))
	scheme := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := cachev1beta1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	c := cp.Client(b, scheme)
	ns := cp.Namespace(b)
	memcached := func(name string) *cachev1beta1.Memcached {
		return &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{Port: 11211}}}
	}
	// status patches a status of generation g with the first n of the five conditions a
	// Memcached in progress reports (Available, Progressing, Degraded, Ready, Reconciling).
	status := func(g, n int) client.Patch {
		conds := []string{"Available", "Progressing", "Degraded", "Ready", "Reconciling"}[:n]
		for i, t := range conds {
			conds[i] = `{"type":"` + t + `","status":"False","reason":"RollingOut","message":"0 of 1 replicas available","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}`
		}
		return client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"status":{"observedGeneration":%d,"conditions":[%s]}}`, g, strings.Join(conds, ",")))
	}
	deployment := func(name string) *appsv1.Deployment {
		return memcachedDeployment(ns, name).(*appsv1.Deployment)
	}

	// Creates make new objects, named by a count that never repeats; the other requests
	// cycle over the objects made so far.
	var memcacheds, deployments int
	generation := 1
	// needMemcacheds and needDeployments make an object for requests run on their own
	// (-bench with a filter) to work on.
	needMemcacheds := func() error {
		if memcacheds > 0 {
			return nil
		}
		memcacheds++
		return c.Create(b.Context(), memcached("mc-0"))
	}
	needDeployments := func() error {
		if deployments > 0 {
			return nil
		}
		deployments++
		return c.Create(b.Context(), deployment("create-0"))
	}
	requests := []struct {
		name  string
		setup func() error
		do    func(i int) error
	}{
		{name: "custom resource create", do: func(int) error {
			memcacheds++
			return c.Create(b.Context(), memcached(fmt.Sprint("mc-", memcacheds-1)))
		}},
		{name: "custom resource get", setup: needMemcacheds, do: func(i int) error {
			return c.Get(b.Context(), client.ObjectKey{Namespace: ns, Name: fmt.Sprint("mc-", i%memcacheds)}, &cachev1beta1.Memcached{})
		}},
		{name: "custom resource status patch", setup: needMemcacheds, do: func(i int) error {
			generation++
			return c.Status().Patch(b.Context(), memcached(fmt.Sprint("mc-", i%memcacheds)), status(generation, 2))
		}},
		{name: "custom resource status patch, one condition", setup: needMemcacheds, do: func(i int) error {
			generation++
			return c.Status().Patch(b.Context(), memcached(fmt.Sprint("mc-", i%memcacheds)), status(generation, 1))
		}},
		{name: "custom resource status patch, five conditions", setup: needMemcacheds, do: func(i int) error {
			generation++
			return c.Status().Patch(b.Context(), memcached(fmt.Sprint("mc-", i%memcacheds)), status(generation, 5))
		}},
		{name: "custom resource status patch, no change", setup: func() error {
			if err := needMemcacheds(); err != nil {
				return err
			}
			for i := range memcacheds {
				if err := c.Status().Patch(b.Context(), memcached(fmt.Sprint("mc-", i)), status(0, 2)); err != nil {
					return err
				}
			}
			return nil
		}, do: func(i int) error {
			return c.Status().Patch(b.Context(), memcached(fmt.Sprint("mc-", i%memcacheds)), status(0, 2))
		}},
		{name: "Deployment create", do: func(int) error {
			deployments++
			return c.Create(b.Context(), deployment(fmt.Sprint("create-", deployments-1)))
		}},
		{name: "Deployment get, unstructured", setup: needDeployments, do: func(i int) error {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
			return c.Get(b.Context(), client.ObjectKey{Namespace: ns, Name: fmt.Sprint("create-", i%deployments)}, u)
		}},
		{name: "Deployment server-side apply create", do: func(i int) error {
			d := deployment(fmt.Sprint("apply-", deployments))
			deployments++
			d.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
			u, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(d)
			if err != nil {
				return err
			}
			delete(u, "status")
			unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
			obj := &unstructured.Unstructured{Object: u}
			return c.Apply(b.Context(), client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("bench"))
		}},
	}
	for _, r := range requests {
		b.Run(r.name, func(b *testing.B) {
			if r.setup != nil {
				if err := r.setup(); err != nil {
					b.Fatal(err)
				}
			}
			before, err := apiServerCPU(cp)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				if err := r.do(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
			after, err := apiServerCPU(cp)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((after-before).Microseconds())/1000/float64(i), "apiserver-ms/op")
		})
	}
}
