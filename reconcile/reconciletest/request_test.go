package reconciletest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestParseRequestNamesRequestsAsTheAPIServerDoes(t *testing.T) {
	tests := []struct {
		method, url string
		want        apiRequest
	}{
		{"POST", "/apis/apps/v1/namespaces/ns/deployments", apiRequest{verb: "create", resource: "deployments"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/web", apiRequest{verb: "get", resource: "deployments", name: "web"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments", apiRequest{verb: "list", resource: "deployments"}},
		{"GET", "/apis/apps/v1/deployments", apiRequest{verb: "list", resource: "deployments"}},
		{"GET", "/apis/apps/v1/deployments?watch=true", apiRequest{verb: "watch", resource: "deployments"}},
		{"GET", "/api/v1/watch/namespaces/ns/pods", apiRequest{verb: "watch", resource: "pods"}},
		{"PUT", "/apis/cache.example.com/v1alpha1/namespaces/ns/memcacheds/m/status", apiRequest{verb: "update", resource: "memcacheds/status", name: "m"}},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c", apiRequest{verb: "patch", resource: "configmaps", name: "c"}},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", apiRequest{verb: "delete", resource: "pods", name: "p"}},
		{"DELETE", "/api/v1/namespaces/ns/pods", apiRequest{verb: "deletecollection", resource: "pods"}},
		{"POST", "/api/v1/namespaces/ns/pods/p/eviction", apiRequest{verb: "create", resource: "pods/eviction", name: "p"}},
		{"GET", "/api/v1/nodes/n", apiRequest{verb: "get", resource: "nodes", name: "n"}},
		{"GET", "/api/v1/namespaces", apiRequest{verb: "list", resource: "namespaces"}},
		{"GET", "/api/v1/namespaces/ns", apiRequest{verb: "get", resource: "namespaces", name: "ns"}},
		{"PUT", "/api/v1/namespaces/ns/finalize", apiRequest{verb: "update", resource: "namespaces/finalize", name: "ns"}},
		{"PATCH", "/api/v1/namespaces/ns/status", apiRequest{verb: "patch", resource: "namespaces/status", name: "ns"}},
		{"GET", "/apis/apps/v1", apiRequest{verb: "get", resource: "/apis/apps/v1"}},
		{"GET", "/version", apiRequest{verb: "get", resource: "/version"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			got := parseRequest(httptest.NewRequest(tt.method, tt.url, http.NoBody))
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
