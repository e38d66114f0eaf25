package reconciletest

import (
	"net/http"
	"strings"
)

// apiRequest is an HTTP request as the API server's authorizer sees it: a verb on a
// resource, optionally a named object.
type apiRequest struct {
	verb     string // get, list, watch, create, update, patch, delete, deletecollection
	resource string // "deployments", "memcacheds/status"; the path for non-resource requests
	name     string
}

// parseRequest names a request the way the API server does (k8s.io/apiserver's
// RequestInfoFactory), so that counts and faults use the words RBAC rules and audit logs use.
func parseRequest(req *http.Request) apiRequest {
	segments := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(segments) > 2 && segments[0] == "api": // /api/v1/...
		rest = segments[2:]
	case len(segments) > 3 && segments[0] == "apis": // /apis/group/version/...
		rest = segments[3:]
	default: // discovery, /version, /openapi and the like
		return apiRequest{verb: strings.ToLower(req.Method), resource: req.URL.Path}
	}

	watch := req.URL.Query().Get("watch")
	watching := watch == "true" || watch == "1"
	if rest[0] == "watch" { // the deprecated /watch/ path prefix
		watching, rest = true, rest[1:]
	}
	// namespaces/NS/RESOURCE... is a namespaced resource; namespaces/NS/status and
	// namespaces/NS/finalize are subresources of the namespace itself.
	if len(rest) > 2 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize" {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return apiRequest{verb: strings.ToLower(req.Method), resource: req.URL.Path}
	}

	r := apiRequest{resource: rest[0]}
	if len(rest) > 1 {
		r.name = rest[1]
	}
	if len(rest) > 2 {
		r.resource += "/" + rest[2]
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watching:
			r.verb = "watch"
		case r.name == "":
			r.verb = "list"
		default:
			r.verb = "get"
		}
	case http.MethodPost:
		r.verb = "create"
	case http.MethodPut:
		r.verb = "update"
	case http.MethodPatch:
		r.verb = "patch"
	case http.MethodDelete:
		if r.name == "" {
			r.verb = "deletecollection"
		} else {
			r.verb = "delete"
		}
	default:
		r.verb = strings.ToLower(req.Method)
	}
	return r
}

// isWrite reports whether a verb changes state on the server.
func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// roundTripperFunc adapts a function to http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
