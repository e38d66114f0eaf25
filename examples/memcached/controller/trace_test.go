package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestAMemcachedRolloutIsTracedOneSpanPerReconcileAndWrite(t *testing.T) {
	e := newEnv(t)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reconciletest.StartManager(t, e.Requests.Wrap(e.Config), reconcile.Manager{
		Options: manager.Options{
			Scheme: operator.Scheme,
			Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{e.Namespace: {}}},
		},
		Controllers: []reconcile.Declaration{controller.New(reconcile.WithTracing(tp))},
	})

	// Whoever created the Memcached left the trace context of that change on it.
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	mc := &cachev1beta1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "cache",
			Annotations: map[string]string{reconcile.TraceparentAnnotation: "00-" + traceID + "-" + spanID + "-01"}},
		Spec: cachev1beta1.MemcachedSpec{Replicas: 2},
	}
	if err := e.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	e.awaitConverged(t, mc)
	// A reconcile's span ends after its writes are answered, so the last one may still be
	// open when the status reads converged: wait until every write has its span.
	var reconciles []tracetest.SpanStub
	var byID map[string]tracetest.SpanStub
	var children map[string][]string
	reconciletest.Eventually(t, func(context.Context) error {
		reconciles, byID, children = spanTree(spans.GetSpans())
		if got, want := writeSpans(reconciles, children), e.Requests.Writes(); got != want {
			return fmt.Errorf("%d write spans for %d writes:\n%s", got, want, &e.Requests)
		}
		return nil
	})

	// The span tree: each reconcile a root linked to the creator's span; each write a child.
	if len(reconciles) == 0 {
		t.Fatal("no span of a reconcile of the Memcached")
	}
	var tree []string
	for _, r := range reconciles {
		if r.Parent.IsValid() {
			t.Errorf("a reconcile's span has parent %s; want a new root", r.Parent.SpanID())
		}
		if len(r.Links) != 1 || r.Links[0].SpanContext.TraceID().String() != traceID || r.Links[0].SpanContext.SpanID().String() != spanID {
			t.Errorf("a reconcile's span links to %+v; want the creator's span %s/%s", r.Links, traceID, spanID)
		}
		if !hasAttribute(r.Attributes, "reconcilekit.object.name", "cache") || !hasAttribute(r.Attributes, "k8s.namespace.name", e.Namespace) {
			t.Errorf("a reconcile's span has attributes %v; want the Memcached's name and namespace", r.Attributes)
		}
		kids := children[r.SpanContext.SpanID().String()]
		tree = append(tree, "Reconcile Memcached ["+strings.Join(kids, ", ")+"]")
	}
	t.Logf("%d reconciles traced:\n%s", len(reconciles), strings.Join(tree, "\n"))
	if !slices.Contains(tree, "Reconcile Memcached [create Deployment, create Service, patch Memcached/status]") {
		t.Errorf("no reconcile created the Deployment and the Service and wrote the status, each a child span")
	}
	for id, s := range byID {
		if s.Name == "patch Memcached/status" && !strings.Contains(attributeOf(s.Attributes, "reconcilekit.write.fields"), "status.conditions") {
			t.Errorf("status write %s names fields %q; want status.conditions among them", id, attributeOf(s.Attributes, "reconcilekit.write.fields"))
		}
	}
}

// spanTree sorts spans into the reconciles' roots, every span by ID, and the names of
// each span's children by their parent's ID.
func spanTree(spans tracetest.SpanStubs) (reconciles []tracetest.SpanStub, byID map[string]tracetest.SpanStub, children map[string][]string) {
	byID = map[string]tracetest.SpanStub{}
	children = map[string][]string{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
		if s.Name == "Reconcile Memcached" {
			reconciles = append(reconciles, s)
			continue
		}
		parent := s.Parent.SpanID().String()
		children[parent] = append(children[parent], s.Name)
	}
	return reconciles, byID, children
}

// writeSpans counts the child spans of the reconciles: one a write.
func writeSpans(reconciles []tracetest.SpanStub, children map[string][]string) int {
	n := 0
	for _, r := range reconciles {
		n += len(children[r.SpanContext.SpanID().String()])
	}
	return n
}

func hasAttribute(attrs []attribute.KeyValue, key, value string) bool {
	return attributeOf(attrs, key) == value
}

func attributeOf(attrs []attribute.KeyValue, key string) string {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}
