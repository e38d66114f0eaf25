package reconciletest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestInterceptNamesRequestsAsTheAPIServerDoes(t *testing.T) {
	tests := []struct {
		method, url string
		want        Request
	}{
		{"POST", "/apis/apps/v1/namespaces/ns/deployments", Request{Verb: "create", Resource: "deployments", Namespace: "ns"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/web", Request{Verb: "get", Resource: "deployments", Namespace: "ns", Name: "web"}},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments", Request{Verb: "list", Resource: "deployments", Namespace: "ns"}},
		{"GET", "/apis/apps/v1/deployments", Request{Verb: "list", Resource: "deployments"}},
		{"GET", "/apis/apps/v1/deployments?watch=true", Request{Verb: "watch", Resource: "deployments"}},
		{"GET", "/api/v1/watch/namespaces/ns/pods", Request{Verb: "watch", Resource: "pods", Namespace: "ns"}},
		{"PUT", "/apis/cache.example.com/v1alpha1/namespaces/ns/memcacheds/m/status", Request{Verb: "update", Resource: "memcacheds", Subresource: "status", Namespace: "ns", Name: "m"}},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c", Request{Verb: "patch", Resource: "configmaps", Namespace: "ns", Name: "c"}},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", Request{Verb: "delete", Resource: "pods", Namespace: "ns", Name: "p"}},
		{"DELETE", "/api/v1/namespaces/ns/pods", Request{Verb: "deletecollection", Resource: "pods", Namespace: "ns"}},
		{"POST", "/api/v1/namespaces/ns/pods/p/eviction", Request{Verb: "create", Resource: "pods", Subresource: "eviction", Namespace: "ns", Name: "p"}},
		{"GET", "/api/v1/nodes/n", Request{Verb: "get", Resource: "nodes", Name: "n"}},
		{"GET", "/api/v1/namespaces", Request{Verb: "list", Resource: "namespaces"}},
		{"GET", "/api/v1/namespaces/ns", Request{Verb: "get", Resource: "namespaces", Namespace: "ns", Name: "ns"}},
		{"PUT", "/api/v1/namespaces/ns/finalize", Request{Verb: "update", Resource: "namespaces", Subresource: "finalize", Namespace: "ns", Name: "ns"}},
		{"PATCH", "/api/v1/namespaces/ns/status", Request{Verb: "patch", Resource: "namespaces", Subresource: "status", Namespace: "ns", Name: "ns"}},
		{"GET", "/apis/apps/v1", Request{Verb: "get"}},
		{"GET", "/version", Request{Verb: "get"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			var got Request
			cfg := Intercept(&rest.Config{}, func(r *Request) (*http.Response, error) {
				got = *r
				return r.Fail(http.StatusTeapot, "seen"), nil
			})
			_, _ = cfg.WrapTransport(nil).RoundTrip(httptest.NewRequest(tt.method, tt.url, http.NoBody))
			got.HTTP, got.next = nil, nil
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A hook that answers a request answers in the API server's place: client-go reads a
// failure as the error the API server would have caused. The host does not exist, so
// a request passed on would fail to connect instead.
func TestAHookAnswersInTheAPIServersPlace(t *testing.T) {
	var seen []string
	cfg := Intercept(&rest.Config{Host: "https://127.0.0.1:1"}, func(r *Request) (*http.Response, error) {
		seen = append(seen, r.Verb+" "+r.Resource+" "+r.Name)
		return r.Fail(http.StatusConflict, "someone else got there first"), nil
	})
	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("ns").Update(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("got %v, want a conflict", err)
	}
	if want := []string{"update configmaps settings"}; !slices.Equal(seen, want) {
		t.Errorf("the hook saw %q, want %q", seen, want)
	}
}
