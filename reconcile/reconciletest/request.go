package reconciletest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/reconcilekit/reconcilekit/internal/apirequest"
)

// Request is a request to the API server, named as the API server's authorizer names it
// (k8s.io/apiserver's RequestInfo), so that hooks use the words of RBAC rules and audit
// logs. A hook passes it on with Send or answers it itself, with Fail say.
type Request struct {
	// Verb is get, list, watch, create, update, patch, delete or deletecollection; for
	// a request to no resource, the HTTP method in lower case.
	Verb string
	// Resource is the resource, like "deployments"; empty for a request to no resource
	// (discovery, /version).
	Resource string
	// Subresource is the subresource, like "status" or "scale"; empty for the object
	// itself.
	Subresource string
	// Namespace is the namespace of a namespaced resource; empty for a cluster-scoped one
	// or a request across every namespace.
	Namespace string
	// Name is the object's name; empty for a list, a watch, a deletecollection and a
	// create, whose name is in the body.
	Name string

	// HTTP is the request itself. A hook that reads its body must leave it readable
	// for Send.
	HTTP *http.Request

	next http.RoundTripper
}

// Intercept returns a copy of cfg whose every request goes to hook, which passes it on
// with Request.Send, answers it itself, or both: it may look at the answer, or lose it.
// Every client built from the copy, a manager's included, is intercepted; requests
// served from an informer cache never reach the hook. The config intercepted last is
// the outermost layer: its hook sees a request first and its answer last.
//
// Counter and Faults are hooks; tests write their own to act at a chosen moment.
func Intercept(cfg *rest.Config, hook func(*Request) (*http.Response, error)) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			r := parseRequest(req)
			r.next = next
			return hook(r)
		})
	})
	return cfg
}

// Send passes the request on towards the API server and returns its answer.
func (r *Request) Send() (*http.Response, error) { return r.next.RoundTrip(r.HTTP) }

// IsWrite reports whether the request changes, or tries to change, state on the
// server: a create, update, patch, delete or deletecollection. The create of a review
// (a SelfSubjectAccessReview, a TokenReview) stores nothing, and is no write.
func (r *Request) IsWrite() bool { return isWrite(r.Verb, r.resource()) }

// Fail returns the answer of an API server that fails the request with the HTTP status
// code and the message: a Status with the reason the API server gives with that code,
// which client-go turns into the matching error (apierrors.IsConflict for 409, IsTimeout
// for 504, ...). It closes the request's body, which will not be sent.
func (r *Request) Fail(code int, message string) *http.Response {
	if r.HTTP.Body != nil {
		_ = r.HTTP.Body.Close()
	}
	reason := reasons[code]
	if reason == "" {
		reason = metav1.StatusReasonUnknown
	}
	body, _ := json.Marshal(metav1.Status{ // a Status always marshals
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     int32(code),
		Reason:   reason,
		Message:  message,
		Details:  &metav1.StatusDetails{Name: r.Name, Kind: r.Resource},
	})
	return &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r.HTTP,
	}
}

// resource names what the request is for as RBAC rules and Counter do: the resource
// with its subresource ("memcacheds/status"), or the path of a request to no resource.
func (r *Request) resource() string {
	switch {
	case r.Resource == "":
		return r.HTTP.URL.Path
	case r.Subresource != "":
		return r.Resource + "/" + r.Subresource
	}
	return r.Resource
}

// parseRequest names a request the way the API server does.
func parseRequest(req *http.Request) *Request {
	info := apirequest.Parse(req)
	return &Request{Verb: info.Verb, Resource: info.Resource, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name, HTTP: req}
}

// isWrite reports whether a request of verb on resource changes state on the server.
func isWrite(verb, resource string) bool { return apirequest.IsWrite(verb, resource) }

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

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
