package reconciletest

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// unreachable is a config for a server that is never reached: every request the tests
// make through it must be answered by a fault.
var unreachable = &rest.Config{Host: "https://127.0.0.1:1"}

func TestFaultsAnswerLikeTheAPIServer(t *testing.T) {
	tests := []struct {
		name string
		code int
		is   func(error) bool
	}{
		{"409 is a conflict", http.StatusConflict, apierrors.IsConflict},
		{"404 is not found", http.StatusNotFound, apierrors.IsNotFound},
		{"403 is forbidden", http.StatusForbidden, apierrors.IsForbidden},
		{"422 is invalid", http.StatusUnprocessableEntity, apierrors.IsInvalid},
		{"429 is too many requests", http.StatusTooManyRequests, apierrors.IsTooManyRequests},
		{"503 is service unavailable", http.StatusServiceUnavailable, apierrors.IsServiceUnavailable},
		{"504 is a timeout", http.StatusGatewayTimeout, apierrors.IsTimeout},
		{"no code is an internal error", 0, apierrors.IsInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faults := &Faults{Rate: 1, Code: tt.code}
			clientset := kubernetes.NewForConfigOrDie(faults.Wrap(unreachable))

			_, err := clientset.CoreV1().ConfigMaps("ns").Create(t.Context(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "settings"},
			}, metav1.CreateOptions{})

			if !tt.is(err) {
				t.Errorf("got %v (reason %s)", err, apierrors.ReasonForError(err))
			}
		})
	}
}

func TestFaultsStrikeOnlyWhatTheyTarget(t *testing.T) {
	tests := []struct {
		name    string
		faults  *Faults
		request string
		strikes bool
	}{
		{"a targeted verb", &Faults{Verbs: []string{"create"}, Rate: 1}, "POST /api/v1/namespaces/ns/pods", true},
		{"another verb", &Faults{Verbs: []string{"create"}, Rate: 1}, "PUT /api/v1/namespaces/ns/pods/p", false},
		{"a targeted subresource", &Faults{Resources: []string{"pods/status"}, Rate: 1}, "PUT /api/v1/namespaces/ns/pods/p/status", true},
		{"the resource of a targeted subresource", &Faults{Resources: []string{"pods/status"}, Rate: 1}, "PUT /api/v1/namespaces/ns/pods/p", false},
		{"a draw below the rate", &Faults{Rate: 0.5, Random: func() float64 { return 0.49 }}, "GET /api/v1/nodes", true},
		{"a draw at the rate", &Faults{Rate: 0.5, Random: func() float64 { return 0.5 }}, "GET /api/v1/nodes", false},
		{"anything at rate zero", &Faults{}, "GET /api/v1/nodes", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			send(t, tt.faults.Wrap(&rest.Config{}), tt.request)
			if got := tt.faults.Injected() == 1; got != tt.strikes {
				t.Errorf("struck = %v, want %v", got, tt.strikes)
			}
		})
	}
}
