package reconciletest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// send sends requests, "METHOD /path" each, through cfg's transport to a server that
// answers every one with 200 OK.
func send(t *testing.T, cfg *rest.Config, requests ...string) {
	t.Helper()
	ok := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	transport := cfg.WrapTransport(ok)
	for _, r := range requests {
		method, path, _ := strings.Cut(r, " ")
		resp, err := transport.RoundTrip(httptest.NewRequest(method, path, http.NoBody))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
}

func TestCounterCountsByVerbAndResource(t *testing.T) {
	var c Counter
	send(t, c.Wrap(&rest.Config{}),
		"POST /api/v1/namespaces/ns/configmaps",
		"POST /api/v1/namespaces/ns/configmaps",
		"PUT /apis/cache.example.com/v1alpha1/namespaces/ns/memcacheds/m/status",
		"GET /api/v1/namespaces/ns/configmaps/a",
		"GET /api/v1/namespaces/ns/configmaps",
		"GET /api/v1/namespaces/ns/configmaps?watch=true",
		"GET /api/v1",
	)

	counts := []struct {
		verb, resource string
		want           int
	}{
		{"create", "configmaps", 2},
		{"update", "memcacheds/status", 1},
		{"update", "memcacheds", 0},
		{"get", "configmaps", 1},
		{"list", "configmaps", 1},
		{"watch", "configmaps", 1},
		{"get", "/api/v1", 1},
	}
	for _, tt := range counts {
		if got := c.Count(tt.verb, tt.resource); got != tt.want {
			t.Errorf("Count(%q, %q) = %d, want %d", tt.verb, tt.resource, got, tt.want)
		}
	}
	if got := c.Writes(); got != 3 {
		t.Errorf("Writes() = %d, want 3 (creates and the status update)", got)
	}
	if got := c.Reads(); got != 2 {
		t.Errorf("Reads() = %d, want 2 (a get and a list; neither the watch nor discovery)", got)
	}

	want := `     1  get     /api/v1
     2  create  configmaps
     1  get     configmaps
     1  list    configmaps
     1  watch   configmaps
     1  update  memcacheds/status
`
	if got := c.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}

	c.Reset()
	if got := c.String(); got != "no requests\n" {
		t.Errorf("after Reset, String() = %q, want no requests", got)
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestExpectNoWrites(t *testing.T) {
	tests := []struct {
		name     string
		requests []string
		fails    bool
	}{
		{"passes when only reads are sent", []string{"GET /api/v1/namespaces/ns/pods", "GET /api/v1/namespaces/ns/pods/p"}, false},
		{"fails listing the writes", []string{"GET /api/v1/namespaces/ns/pods", "PATCH /apis/apps/v1/namespaces/ns/deployments/web"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Counter
			cfg := c.Wrap(&rest.Config{})
			send(t, cfg, "POST /api/v1/namespaces/ns/pods") // before: forgotten

			r := &recorder{TB: t}
			ExpectNoWrites(r, &c, func() { send(t, cfg, tt.requests...) })

			if failed := len(r.failures) > 0; failed != tt.fails {
				t.Fatalf("failed = %v, want %v; failures: %q", failed, tt.fails, r.failures)
			}
			if tt.fails && !strings.Contains(strings.Join(strings.Fields(r.failures[0]), " "), "1 patch deployments") {
				t.Errorf("failure does not list the patch:\n%s", r.failures[0])
			}
		})
	}
}
