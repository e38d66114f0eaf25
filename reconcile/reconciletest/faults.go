package reconciletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Faults makes chosen requests fail, the way the API server fails them, so that a test
// can prove an operator survives conflicts, timeouts and outages. A faulted request never
// reaches the server: the answer is a Status with the code and its reason, which client-go
// turns into the matching error (apierrors.IsConflict for 409, IsTimeout for 504, ...).
//
// Set the fields, then Wrap; do not change them afterwards.
type Faults struct {
	// Verbs to fail, named as the API server names them: get, list, watch, create,
	// update, patch, delete, deletecollection. Empty fails every verb.
	Verbs []string

	// Resources to fail, like "deployments" or "memcacheds/status". Empty fails every
	// resource.
	Resources []string

	// Rate is the fraction of matching requests that fail, from 0 (none) to 1 (all).
	Rate float64

	// Code is the HTTP status code of the failure; zero means 500 Internal Server Error.
	Code int

	// Random returns numbers in [0, 1) that decide which requests fail; nil means
	// math/rand/v2. Set it for a reproducible test.
	Random func() float64

	mu       sync.Mutex
	injected int
}

// Wrap returns a copy of cfg whose requests may fail. The config wrapped last is the
// outermost layer: Wrap a Counter's config and the Counter sees only the requests that
// were not failed; let the Counter wrap this config instead to count failed ones too.
func (f *Faults) Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			r := parseRequest(req)
			if !f.strike(r) {
				return next.RoundTrip(req)
			}
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return f.response(req, r), nil
		})
	})
	return cfg
}

// Injected returns how many requests have failed so far.
func (f *Faults) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// strike decides whether r fails, and counts it if so.
func (f *Faults) strike(r apiRequest) bool {
	if len(f.Verbs) > 0 && !slices.Contains(f.Verbs, r.verb) ||
		len(f.Resources) > 0 && !slices.Contains(f.Resources, r.resource) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	random := f.Random
	if random == nil {
		random = rand.Float64
	}
	if random() >= f.Rate {
		return false
	}
	f.injected++
	return true
}

// response answers r as the API server would fail it.
func (f *Faults) response(req *http.Request, r apiRequest) *http.Response {
	code := f.Code
	if code == 0 {
		code = http.StatusInternalServerError
	}
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     int32(code),
		Reason:   reasons[code],
		Message:  strings.TrimSpace(fmt.Sprintf("fault injected by reconciletest: %s %s %s", r.verb, r.resource, r.name)),
		Details:  &metav1.StatusDetails{Name: r.name, Kind: r.resource},
	}
	if status.Reason == "" {
		status.Reason = metav1.StatusReasonUnknown
	}
	body, _ := json.Marshal(status) // a Status always marshals
	return &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// reasons are the Status reasons the API server gives with each code.
var reasons = map[int]metav1.StatusReason{
	http.StatusBadRequest:            metav1.StatusReasonBadRequest,
	http.StatusUnauthorized:          metav1.StatusReasonUnauthorized,
	http.StatusForbidden:             metav1.StatusReasonForbidden,
	http.StatusNotFound:              metav1.StatusReasonNotFound,
	http.StatusMethodNotAllowed:      metav1.StatusReasonMethodNotAllowed,
	http.StatusNotAcceptable:         metav1.StatusReasonNotAcceptable,
	http.StatusConflict:              metav1.StatusReasonConflict,
	http.StatusGone:                  metav1.StatusReasonExpired,
	http.StatusRequestEntityTooLarge: metav1.StatusReasonRequestEntityTooLarge,
	http.StatusUnsupportedMediaType:  metav1.StatusReasonUnsupportedMediaType,
	http.StatusUnprocessableEntity:   metav1.StatusReasonInvalid,
	http.StatusTooManyRequests:       metav1.StatusReasonTooManyRequests,
	http.StatusInternalServerError:   metav1.StatusReasonInternalError,
	http.StatusServiceUnavailable:    metav1.StatusReasonServiceUnavailable,
	http.StatusGatewayTimeout:        metav1.StatusReasonTimeout,
}
