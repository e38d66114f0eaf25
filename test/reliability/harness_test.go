package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The scenarios watch and bend an operator's traffic in its transport, between its
// clients and the API server, where a crash, a lost answer or a refusal really happens.

// intercept returns a copy of cfg whose requests go through fn, which passes each on
// with next (or does not).
func intercept(cfg *rest.Config, fn func(req *http.Request, next http.RoundTripper) (*http.Response, error)) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) { return fn(req, next) })
	})
	return cfg
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// call is a request as the API server's authorizer names it.
type call struct {
	verb     string // create, update, patch, delete, get, list, watch
	resource string // "pods", "ats/status"
	name     string // empty for a create: the name is in the body
}

// classify names a request to a namespaced or cluster-scoped resource; other requests
// (discovery, /version) get an empty resource.
func classify(req *http.Request) call {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) > 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return call{verb: strings.ToLower(req.Method)}
	}
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	c := call{resource: parts[0]}
	if len(parts) > 1 {
		c.name = parts[1]
	}
	if len(parts) > 2 {
		c.resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodPost:
		c.verb = "create"
	case http.MethodPut:
		c.verb = "update"
	case http.MethodPatch:
		c.verb = "patch"
	case http.MethodDelete:
		c.verb = "delete"
	default:
		c.verb = "get"
		if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
			c.verb = "watch"
		} else if c.name == "" {
			c.verb = "list"
		}
	}
	return c
}

func (c call) write() bool {
	return c.verb == "create" || c.verb == "update" || c.verb == "patch" || c.verb == "delete"
}

// nameIn returns the name of the object in a request or response body, JSON or
// protobuf, leaving the body readable again.
func nameIn(body *io.ReadCloser) string {
	if *body == nil {
		return ""
	}
	data, _ := io.ReadAll(*body)
	_ = (*body).Close()
	*body = io.NopCloser(bytes.NewReader(data))
	obj, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetName()
}

// plug stands for the operator's process: pulled, it stops every request at once, as if
// the process had died, so that whatever the operator was about to write never arrives.
// A trigger pulls it by itself after a chosen answer.
type plug struct {
	mu      sync.Mutex
	pulled  bool
	trigger func(call, *http.Response) bool
}

var errPulled = errors.New("the plug was pulled: the operator's process is gone")

func (p *plug) wrap(cfg *rest.Config) *rest.Config {
	return intercept(cfg, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		if p.isPulled() {
			return nil, errPulled
		}
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.pulled && p.trigger != nil && p.trigger(classify(req), resp) {
			p.pulled = true
		}
		if p.pulled {
			// The server has done the work; the operator never learns of it.
			_ = resp.Body.Close()
			return nil, errPulled
		}
		return resp, nil
	})
}

func (p *plug) pull() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pulled = true
}

func (p *plug) isPulled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pulled
}

// ledger counts the objects the API server created, by resource and name, whoever
// asked: the proof that a command ran once and that nothing was made twice.
type ledger struct {
	mu      sync.Mutex
	created map[string]int // "pods/at-1"
}

func (l *ledger) wrap(cfg *rest.Config) *rest.Config {
	return intercept(cfg, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		// A create, or an apply that creates.
		if err != nil || resp.StatusCode != http.StatusCreated {
			return resp, err
		}
		c := classify(req)
		if c.name == "" {
			c.name = nameIn(&resp.Body)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.created == nil {
			l.created = make(map[string]int)
		}
		l.created[c.resource+"/"+c.name]++
		return resp, nil
	})
}

// count returns how many times the pod of that name was created.
func (l *ledger) count(pod string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.created["pods/"+pod]
}

// check fails the test for every object created more than once, and returns how many
// pods were created.
func (l *ledger) check(t *testing.T) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	pods := 0
	for key, n := range l.created {
		if strings.HasPrefix(key, "pods/") {
			pods += n
		}
		if n > 1 {
			t.Errorf("%s was created %d times", key, n)
		}
	}
	return pods
}

// trap runs a function once, when an operator sends a chosen write or once the API server
// has accepted it, to act at the worst moment. Writes are named "resource/name".
type trap struct {
	mu               sync.Mutex
	onSend, onAnswer map[string]func()
}

func (p *trap) wrap(cfg *rest.Config) *rest.Config {
	return intercept(cfg, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		c := classify(req)
		if !c.write() {
			return next.RoundTrip(req)
		}
		if c.name == "" {
			c.name = nameIn(&req.Body)
		}
		write := c.resource + "/" + c.name
		p.spring(p.onSend, write)
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode < 300 {
			p.spring(p.onAnswer, write)
		}
		return resp, err
	})
}

func (p *trap) spring(traps map[string]func(), write string) {
	p.mu.Lock()
	do, ok := traps[write]
	delete(traps, write)
	p.mu.Unlock()
	if ok {
		do()
	}
}

// whenSent runs do when the operator sends the write, before it reaches the server.
func (p *trap) whenSent(write string, do func()) { p.set(&p.onSend, write, do) }

// whenAnswered runs do once the server has accepted the write, before the operator hears
// of it.
func (p *trap) whenAnswered(write string, do func()) { p.set(&p.onAnswer, write, do) }

func (p *trap) set(traps *map[string]func(), write string, do func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if *traps == nil {
		*traps = map[string]func(){}
	}
	(*traps)[write] = do
}

// denials records the requests the API server refused as forbidden.
type denials struct {
	mu    sync.Mutex
	calls []call
}

func (d *denials) wrap(cfg *rest.Config) *rest.Config {
	return intercept(cfg, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			d.mu.Lock()
			defer d.mu.Unlock()
			if c := classify(req); !slices.Contains(d.calls, c) {
				d.calls = append(d.calls, c)
			}
		}
		return resp, err
	})
}

func (d *denials) list() []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// lostReplies lets a fraction of writes through and then loses the answer, which the
// operator sees as a timeout: the harshest kind of timeout, since the write took effect.
type lostReplies struct {
	rate float64
	lost atomic.Int64
}

func (l *lostReplies) wrap(cfg *rest.Config) *rest.Config {
	return intercept(cfg, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || !classify(req).write() || rand.Float64() >= l.rate {
			return resp, err
		}
		l.lost.Add(1)
		_ = resp.Body.Close()
		return answer(req, http.StatusGatewayTimeout, metav1.StatusReasonTimeout, "the answer was lost after the request took effect"), nil
	})
}

// stumble fails the first n writes of each object of resource with an internal error
// before they reach the server, so that its reconciles fail and the operator records
// events about them: one, and then a series.
func stumble(cfg *rest.Config, resource string, n int) *rest.Config {
	var mu sync.Mutex
	failed := map[string]int{}
	return intercept(cfg, func(req *http.Request, next http.RoundTripper) (*http.Response, error) {
		c := classify(req)
		if !c.write() || c.resource != resource {
			return next.RoundTrip(req)
		}
		if c.name == "" {
			c.name = nameIn(&req.Body)
		}
		mu.Lock()
		fail := failed[c.name] < n
		failed[c.name]++
		mu.Unlock()
		if fail {
			return answer(req, http.StatusInternalServerError, metav1.StatusReasonInternalError, "the test stumbled"), nil
		}
		return next.RoundTrip(req)
	})
}

// answer is the response of an API server that fails req with a Status.
func answer(req *http.Request, code int, reason metav1.StatusReason, message string) *http.Response {
	status, _ := json.Marshal(metav1.Status{ // a Status always marshals
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: reason, Message: message,
	})
	return &http.Response{
		StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(status)), ContentLength: int64(len(status)),
	}
}

// watchStatus watches the objects of op's kind in ns, as an administrator, until the
// test ends, and fails the test for every status that goes backwards.
func watchStatus(t *testing.T, ns string, op *operator) {
	t.Helper()
	c, err := cache.New(cp.Config, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	informer, err := c.GetInformer(t.Context(), op.empty())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{} // one report an object is enough
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, new any) {
			o, n := old.(client.Object), new.(client.Object)
			if why := op.regressed(o, n); why != "" {
				mu.Lock()
				defer mu.Unlock()
				if !seen[n.GetName()] {
					seen[n.GetName()] = true
					t.Errorf("%s %s regressed: %s", op.name, n.GetName(), why)
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx) // returns when ctx is done
	}()
	t.Cleanup(func() { cancel(); <-done })
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatal("the status watch did not sync")
	}
}

// await polls cond until it returns nil, and fails the test if that takes longer than
// limit, which is far beyond what the condition needs on an idle machine.
func await(t *testing.T, limit time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, limit, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("still waiting after %v: %v", limit, last)
	}
}

// reconciles returns how many reconciles the named controller has finished in this
// process, as controller-runtime counts them.
func reconciles(controller string) float64 {
	families, _ := metrics.Registry.Gather() // a partial answer still holds the counter
	total := 0.0
	for _, family := range families {
		if family.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "controller" && label.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}
