// Package apirequest names a request to the Kubernetes API server as the server's
// authorizer does (k8s.io/apiserver's RequestInfo), in the words of RBAC rules and audit
// logs, from its method and path alone: what reconciletest's request hooks and rehearsal's
// recorder read, kept apart so that rehearsal does not link the test tools.
package apirequest

import (
	"net/http"
	"strings"
)

// Info is a request named as the API server's authorizer names it.
type Info struct {
	// Verb is get, list, watch, create, update, patch, delete or deletecollection; for
	// a request to no resource, the HTTP method in lower case.
	Verb string
	// Resource is the resource, like "deployments"; empty for a request to no resource.
	Resource string
	// Subresource is the subresource, like "status" or "scale".
	Subresource string
	// Namespace is the namespace of a namespaced resource.
	Namespace string
	// Name is the object's name; empty for a list, a watch, a deletecollection and a
	// create.
	Name string
}

// Parse names a request the way the API server does (k8s.io/apiserver's
// RequestInfoFactory).
func Parse(req *http.Request) Info {
	r := Info{Verb: strings.ToLower(req.Method)}
	segments := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var parts []string
	switch {
	case len(segments) > 2 && segments[0] == "api": // /api/v1/...
		parts = segments[2:]
	case len(segments) > 3 && segments[0] == "apis": // /apis/group/version/...
		parts = segments[3:]
	default: // discovery, /version, /openapi and the like
		return r
	}

	watch := req.URL.Query().Get("watch")
	watching := watch == "true" || watch == "1"
	if parts[0] == "watch" { // the deprecated /watch/ path prefix
		watching, parts = true, parts[1:]
	}
	// namespaces/NS/RESOURCE... is a namespaced resource; namespaces/NS/status and
	// namespaces/NS/finalize are subresources of the namespace itself, whose namespace
	// is its own name, as the API server has it.
	if len(parts) > 1 && parts[0] == "namespaces" {
		r.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	if len(parts) == 0 { // /api/v1/watch
		return r
	}

	r.Resource = parts[0]
	if len(parts) > 1 {
		r.Name = parts[1]
	}
	if len(parts) > 2 {
		r.Subresource = parts[2]
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watching:
			r.Verb = "watch"
		case r.Name == "":
			r.Verb = "list"
		default:
			r.Verb = "get"
		}
	case http.MethodPost:
		r.Verb = "create"
	case http.MethodPut:
		r.Verb = "update"
	case http.MethodPatch:
		r.Verb = "patch"
	case http.MethodDelete:
		if r.Name == "" {
			r.Verb = "deletecollection"
		} else {
			r.Verb = "delete"
		}
	}
	return r
}

// IsWrite reports whether a request of verb on resource changes state on the server. A
// review (may I? who is this?) is a create that stores nothing: a question, not a write.
func IsWrite(verb, resource string) bool {
	switch verb {
	case "create":
		return !reviews[resource]
	case "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// reviews are the resources of questions to the API server's authenticator and authorizer.
var reviews = map[string]bool{
	"selfsubjectaccessreviews": true, "selfsubjectrulesreviews": true, "subjectaccessreviews": true,
	"localsubjectaccessreviews": true, "selfsubjectreviews": true, "tokenreviews": true,
}

// IsWrite reports whether the request changes, or tries to change, state on the server:
// a create, update, patch, delete or deletecollection, but not the create of a review.
func (r Info) IsWrite() bool { return IsWrite(r.Verb, r.Resource) }
