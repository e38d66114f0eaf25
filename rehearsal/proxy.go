package rehearsal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/reconcilekit/reconcilekit/internal/apirequest"
)

// recorder is the API server as a build sees it: a plain HTTP server on the loopback
// interface that passes every request on, as an administrator, and records each write the
// API server accepts, with the object before and after it.
type recorder struct {
	server *http.Server
	url    string // where the build reaches it
	get    http.RoundTripper
	host   string // the API server's address

	mu        sync.Mutex
	writes    []Write
	lastWrite time.Time // of any write sent, accepted or not
	watches   int       // watches opened since the last take
	failed    error     // the first write that could not be described
}

// decoder decodes the built-in types in JSON or protobuf, as a build may send them.
var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s) // client-go's scheme always builds
	_ = metav1.AddMetaToScheme(s)     // a metadata-only client's answers (PartialObjectMetadata)
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}()

// startRecorder serves the recorder in front of the API server cfg reaches.
func startRecorder(cfg *rest.Config) (*recorder, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("the API server's address: %w", err)
	}
	rec := &recorder{host: cfg.Host}
	if rec.get, err = rest.TransportFor(cfg); err != nil {
		return nil, err
	}
	recorded := rest.CopyConfig(cfg)
	recorded.Wrap(func(next http.RoundTripper) http.RoundTripper { return hooked{rec.hook, next} })
	transport, err := rest.TransportFor(recorded)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rec.url = "http://" + l.Addr().String()
	rec.server = &http.Server{
		Handler: &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(target)
				r.Out.Host = ""
			},
			Transport:     transport,
			FlushInterval: -1, // watches stream
		},
		ReadHeaderTimeout: time.Minute,
	}
	go func() { _ = rec.server.Serve(l) }()
	return rec, nil
}

func (rec *recorder) close() error { return rec.server.Close() }

// take returns the writes recorded since the last take, and forgets them.
func (rec *recorder) take() ([]Write, error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	ws, err := rec.writes, rec.failed
	rec.writes, rec.failed, rec.watches = nil, nil, 0
	return ws, err
}

// activity returns when the last write was sent and how many watches were opened since
// the last take.
func (rec *recorder) activity() (time.Time, int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.lastWrite, rec.watches
}

// quietResources are written all the time by a healthy operator, and tell a reviewer
// nothing of what it does to the cluster: a leader's lease.
var quietResources = map[string]bool{"leases": true}

// request is a request on its way to the API server, named as the API server names it.
type request struct {
	apirequest.Info
	HTTP *http.Request
	next http.RoundTripper
}

// Send passes the request on towards the API server and returns its answer.
func (r *request) Send() (*http.Response, error) { return r.next.RoundTrip(r.HTTP) }

// hooked hands every request to hook, which sends it on through next.
type hooked struct {
	hook func(*request) (*http.Response, error)
	next http.RoundTripper
}

func (h hooked) RoundTrip(req *http.Request) (*http.Response, error) {
	return h.hook(&request{Info: apirequest.Parse(req), HTTP: req, next: h.next})
}

func (rec *recorder) hook(r *request) (*http.Response, error) {
	if r.Verb == "watch" {
		rec.mu.Lock()
		rec.watches++
		rec.mu.Unlock()
	}
	if !r.IsWrite() || quietResources[r.Resource] {
		return r.Send()
	}
	rec.mu.Lock()
	rec.lastWrite = time.Now()
	rec.mu.Unlock()
	var before map[string]any
	if r.Name != "" && r.Verb != "create" && r.Verb != "deletecollection" {
		var err error
		if before, err = rec.read(r.HTTP.Context(), r.HTTP.URL.Path, r.Subresource); err != nil {
			rec.fail(fmt.Errorf("reading %s before its %s: %w", r.HTTP.URL.Path, r.Verb, err))
		}
	}
	resp, err := r.Send()
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		rec.fail(err)
		return resp, nil
	}
	after, kind, err := decode(body, resp.Header.Get("Content-Type"))
	if err != nil {
		rec.fail(fmt.Errorf("the answer to %s %s: %w", r.Verb, r.HTTP.URL.Path, err))
		return resp, nil
	}
	switch kind {
	case "Status": // the answer of a delete that deleted at once
		after = nil
	case "PartialObjectMetadata": // a metadata-only client's: the rest is as it was
		if before != nil {
			whole := maps.Clone(before)
			whole["metadata"] = after["metadata"]
			after, kind = whole, ""
		}
	}
	w := Write{Namespace: r.Namespace, Name: r.Name, Kind: kind}
	if w.Kind == "" || w.Kind == "Status" || w.Kind == "PartialObjectMetadata" {
		w.Kind, _ = before["kind"].(string)
	}
	if w.Name == "" && after != nil {
		w.Name, _ = nested(after, "metadata", "name").(string)
	}
	if w.Kind == "" {
		w.Kind = r.Resource
	}
	status := r.Subresource == "status"
	switch {
	case r.Verb == "delete" || r.Verb == "deletecollection":
		w.Verb = Deletes
	case before == nil:
		w.Verb = Creates
	case status:
		w.Verb, w.Changes = UpdatesStatus, diff(before, after, true)
	default:
		w.Verb, w.Changes = Rewrites, diff(before, after, false)
		if restarts(w.Kind, w.Changes) {
			w.Verb = Restarts
		}
	}
	rec.mu.Lock()
	rec.writes = append(rec.writes, w)
	rec.mu.Unlock()
	return resp, nil
}

// workloads are the kinds whose pods are replaced when their pod template changes.
var workloads = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true}

func restarts(kind string, changes []Change) bool {
	if !workloads[kind] {
		return false
	}
	for _, c := range changes {
		if strings.HasPrefix(string(c), "spec.template.") || strings.HasPrefix(string(c), "pod template ") {
			return true
		}
	}
	return false
}

func (rec *recorder) fail(err error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.failed == nil {
		rec.failed = err
	}
}

// read gets the object at path as JSON, nil if it does not exist. A subresource other
// than status is read as its object.
func (rec *recorder) read(ctx context.Context, path, subresource string) (map[string]any, error) {
	if subresource != "" && subresource != "status" {
		path = strings.TrimSuffix(path, "/"+subresource)
	}
	u, err := url.Parse(rec.host)
	if err != nil {
		return nil, err
	}
	u.Path = path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := rec.get.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return nil, err
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	obj, _, err := decode(body, "application/json")
	return obj, err
}

// decode returns a JSON or protobuf object as JSON decoded into maps, and its kind.
func decode(body []byte, contentType string) (map[string]any, string, error) {
	if strings.Contains(contentType, "protobuf") {
		obj, gvk, err := decoder.Decode(body, nil, nil)
		if err != nil {
			return nil, "", err
		}
		if body, err = json.Marshal(obj); err != nil {
			return nil, "", err
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, "", err
		}
		return m, gvk.Kind, nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, "", err
	}
	kind, _ := m["kind"].(string)
	if kind == "" {
		return m, "", errors.New("an object without a kind")
	}
	return m, kind, nil
}

func nested(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
