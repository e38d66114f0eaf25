package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestTracingIsOffUnlessTheEnvironmentNamesAnOTLPEndpoint starts the manager's tracer
// provider as main does, under the OpenTelemetry environment variables, and counts the
// exports a collector receives once the last spans are flushed.
func TestTracingIsOffUnlessTheEnvironmentNamesAnOTLPEndpoint(t *testing.T) {
	var exports atomic.Int32
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			exports.Add(1)
		}
	}))
	t.Cleanup(collector.Close)

	for _, tc := range []struct {
		name        string
		env         map[string]string
		wantExports int32 // -1: no provider at all
	}{
		{name: "no endpoint: off", wantExports: -1},
		{name: "an endpoint for every signal", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}, wantExports: 1},
		{name: "an endpoint for traces", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.URL + "/v1/traces"}, wantExports: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			exports.Store(0)
			tp, err := tracerProvider(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tp == nil {
				if tc.wantExports != -1 {
					t.Fatal("no tracer provider; want one exporting to the collector")
				}
				return
			}
			if tc.wantExports == -1 {
				t.Fatal("a tracer provider; want tracing off")
			}
			_, span := tp.Tracer("test").Start(context.Background(), "Reconcile Memcached")
			span.End()
			if err := flushTraces(tp); err != nil {
				t.Fatal(err)
			}
			if got := exports.Load(); got != tc.wantExports {
				t.Errorf("the collector received %d exports; want %d", got, tc.wantExports)
			}
		})
	}
}
