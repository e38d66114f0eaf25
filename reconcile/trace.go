package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/requeue"
)

// TraceparentAnnotation is the annotation in which whoever changed an object may leave the
// W3C trace context of that change (Kubernetes' KEP-5915). A reconcile's span links to it;
// the shell only reads it, never writes it, so tracing costs no write.
const TraceparentAnnotation = "tracing.k8s.io/traceparent"

// tracerName names the library's tracer.
const tracerName = "github.com/reconcilekit/reconcilekit/reconcile"

// WithTracing makes the shell trace with tp: one span per reconcile ("Reconcile <Kind>",
// with the object's namespace, name, generation, the outcome and the requeue), a new root
// linked to the span of the change that caused it when the object carries
// TraceparentAnnotation, and a child span per write the controller makes, the shell's and
// its logic's through Scope's Writer ("<verb> <Kind>", with the object's name and the
// fields the write sets). Off by default: no TracerProvider, no span.
func WithTracing(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracer = tp.Tracer(tracerName) }
}

// startReconcile starts the span of one reconcile of obj, a new root linked to the trace
// context obj carries.
func startReconcile(ctx context.Context, tracer trace.Tracer, kind string, obj client.Object) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("k8s.namespace.name", obj.GetNamespace()),
		attribute.String("reconcilekit.object.kind", kind),
		attribute.String("reconcilekit.object.name", obj.GetName()),
		attribute.Int64("reconcilekit.object.generation", obj.GetGeneration()),
	)}
	if tp := obj.GetAnnotations()[TraceparentAnnotation]; tp != "" {
		carrier := propagation.MapCarrier{"traceparent": tp}
		if sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier)); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		}
	}
	return tracer.Start(ctx, "Reconcile "+kind, opts...)
}

// endReconcile records the outcome on the reconcile's span and ends it.
func endReconcile(span trace.Span, outcome requeue.Outcome, held bool) {
	span.SetAttributes(attribute.String("reconcilekit.outcome", outcome.String()))
	if err := outcome.Err(); err != nil {
		span.RecordError(err)
		if !held && !isQuiet(err) {
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}

// tracedClient is the shell's client with a span per write.
type tracedClient struct {
	client.Client
	tracer trace.Tracer
}

func (c tracedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	ctx, span := c.start(ctx, "create", obj, "")
	return end(span, c.Client.Create(ctx, obj, opts...))
}

func (c tracedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	ctx, span := c.start(ctx, "update", obj, "")
	return end(span, c.Client.Update(ctx, obj, opts...))
}

func (c tracedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	ctx, span := c.start(ctx, "patch", obj, "")
	patch = recordChanges(span, obj, patch)
	return end(span, c.Client.Patch(ctx, obj, patch, opts...))
}

func (c tracedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	ctx, span := c.start(ctx, "delete", obj, "")
	return end(span, c.Client.Delete(ctx, obj, opts...))
}

func (c tracedClient) Status() client.SubResourceWriter {
	return tracedStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type tracedStatus struct {
	client.SubResourceWriter
	c tracedClient
}

func (s tracedStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	ctx, span := s.c.start(ctx, "update", obj, "status")
	return end(span, s.SubResourceWriter.Update(ctx, obj, opts...))
}

func (s tracedStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	ctx, span := s.c.start(ctx, "patch", obj, "status")
	patch = recordChanges(span, obj, patch)
	return end(span, s.SubResourceWriter.Patch(ctx, obj, patch, opts...))
}

// start starts the span of a write of obj (of its subresource, if any).
func (c tracedClient) start(ctx context.Context, verb string, obj client.Object, subresource string) (context.Context, trace.Span) {
	kind := fmt.Sprintf("%T", obj)
	if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
		kind = gvk.Kind
	}
	if subresource != "" {
		kind += "/" + subresource
	}
	return c.tracer.Start(ctx, verb+" "+kind, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("k8s.namespace.name", obj.GetNamespace()),
		attribute.String("reconcilekit.object.name", obj.GetName()),
	))
}

// end records err on span and ends it.
func end(span trace.Span, err error) error {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	return err
}

// recordChanges records on span the fields patch sets on obj, and returns the patch to send:
// its body as computed once, since a merge patch's body is a diff of two serialised objects,
// the costliest part of tracing a write if done twice.
func recordChanges(span trace.Span, obj client.Object, patch client.Patch) client.Patch {
	if !span.IsRecording() {
		return patch
	}
	data, err := patch.Data(obj)
	if err != nil {
		return patch // the client meets the same error and the span records it
	}
	span.SetAttributes(changed(data))
	return client.RawPatch(patch.Type(), data)
}

// changed names the fields a patch body sets, two levels deep ("status.conditions"),
// sorted; metadata.resourceVersion, the optimistic lock's, is left out.
func changed(data []byte) attribute.KeyValue {
	var fields []string
	var doc map[string]any
	if json.Unmarshal(data, &doc) == nil {
		for top, v := range doc {
			if top == "apiVersion" || top == "kind" {
				continue
			}
			inner, ok := v.(map[string]any)
			if !ok {
				fields = append(fields, top)
				continue
			}
			for k := range inner {
				if path := top + "." + k; path != "metadata.resourceVersion" {
					fields = append(fields, path)
				}
			}
		}
	}
	slices.Sort(fields)
	return attribute.String("reconcilekit.write.fields", strings.Join(fields, ","))
}
