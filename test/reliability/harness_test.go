package reliability

import (
	"bytes"
	"context"
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
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The scenarios watch and bend an operator's traffic in its transport, between its
// clients and the API server, where a crash, a lost answer or a refusal really happens.

// object names the object a request is about as "resource/name", the subresource
// included ("ats/status/at-1"), reading the name from the body of a create.
func object(r *reconciletest.Request) string {
	name := r.Name
	if name == "" {
		name = nameIn(&r.HTTP.Body)
	}
	if r.Subresource != "" {
		return r.Resource + "/" + r.Subresource + "/" + name
	}
	return r.Resource + "/" + name
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
	trigger func(*reconciletest.Request, *http.Response) bool
}

var errPulled = errors.New("the plug was pulled: the operator's process is gone")

func (p *plug) wrap(cfg *rest.Config) *rest.Config {
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		if p.isPulled() {
			return nil, errPulled
		}
		resp, err := r.Send()
		if err != nil {
			return resp, err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.pulled && p.trigger != nil && p.trigger(r, resp) {
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
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		// A create names its object in the request's body: read there, since a connection
		// cut mid-answer leaves the answer's body unreadable, though the object was made.
		if !r.IsWrite() { // a review the operator asks, such as a SelfSubjectAccessReview, stores nothing
			return r.Send()
		}
		name := r.Name
		if name == "" && r.HTTP.Body != nil {
			name = nameIn(&r.HTTP.Body)
		}
		resp, err := r.Send()
		// A create, or an apply that creates.
		if err != nil || resp.StatusCode != http.StatusCreated {
			return resp, err
		}
		if name == "" { // a generated name
			name = nameIn(&resp.Body)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.created == nil {
			l.created = make(map[string]int)
		}
		l.created[r.Resource+"/"+name]++
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
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		if !r.IsWrite() {
			return r.Send()
		}
		write := object(r)
		p.spring(p.onSend, write)
		resp, err := r.Send()
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

// denials records the requests the API server refused as forbidden, as "verb
// resource/name".
type denials struct {
	mu    sync.Mutex
	calls []string
}

func (d *denials) wrap(cfg *rest.Config) *rest.Config {
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		// Named before sending: the transport may still read the body after the answer.
		call := r.Verb + " " + object(r)
		resp, err := r.Send()
		if err == nil && resp.StatusCode == http.StatusForbidden {
			d.mu.Lock()
			defer d.mu.Unlock()
			if c := call; !slices.Contains(d.calls, c) {
				d.calls = append(d.calls, c)
			}
		}
		return resp, err
	})
}

func (d *denials) list() []string {
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
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		resp, err := r.Send()
		if err != nil || !r.IsWrite() || rand.Float64() >= l.rate {
			return resp, err
		}
		l.lost.Add(1)
		_ = resp.Body.Close()
		return r.Fail(http.StatusGatewayTimeout, "the answer was lost after the request took effect"), nil
	})
}

// stumble fails the first n writes of each object of resource with a refusal (422) before
// they reach the server, so that its reconciles fail and the operator records events about
// them: one, and then a series. Not a 5xx: the shell retries a transient error without a
// word until it has failed three times in a row (reconcile.WithReportAfter).
func stumble(cfg *rest.Config, resource string, n int) *rest.Config {
	var mu sync.Mutex
	failed := map[string]int{}
	return reconciletest.Intercept(cfg, func(r *reconciletest.Request) (*http.Response, error) {
		if !r.IsWrite() || r.Resource != resource || r.Subresource != "" {
			return r.Send()
		}
		name := object(r)
		mu.Lock()
		fail := failed[name] < n
		failed[name]++
		mu.Unlock()
		if fail {
			return r.Fail(http.StatusUnprocessableEntity, "the test stumbled"), nil
		}
		return r.Send()
	})
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
	runCache(t, c, "the status watch")
}

// runCache starts c until the test ends and waits until it has synced; what names it in
// the failure.
func runCache(t *testing.T, c cache.Cache, what string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx) // returns when ctx is done
	}()
	t.Cleanup(func() { cancel(); <-done })
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatalf("%s did not sync", what)
	}
}

// await polls cond until it returns nil, and fails the test if that takes longer than
// limit, which is far beyond what the condition needs on an idle machine. The failure says
// what cond last found missing (see poll), never merely that time ran out.
func await(t *testing.T, limit time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	if err := poll(t.Context(), limit, cond); err != nil {
		t.Fatal(err)
	}
}

// awaitExplained is await for a wait whose failure needs more than cond's last error to
// be understood: once it times out, explain describes the state of things, and the test
// fails with both.
func awaitExplained(t *testing.T, limit time.Duration, cond func(ctx context.Context) error, explain func(ctx context.Context) string) {
	t.Helper()
	err := poll(t.Context(), limit, cond)
	if err == nil {
		return
	}
	// The test's own context may be ending; the description is worth a minute more.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
	defer cancel()
	t.Fatalf("%v\n%s", err, explain(ctx))
}

// checkLimit bounds one call of a condition, so that a call stuck on an API server that
// does not answer cannot hold a wait past its limit by much.
const checkLimit = time.Minute

// poll calls cond every 100 ms until it returns nil or limit has passed, and then returns
// the last error of cond's own: a call is never cut short by limit, since the error of a
// call cut short says only that time ran out ("context deadline exceeded"), not what was
// still missing. A call that ends with ctx, or takes longer than checkLimit, keeps the
// error of the call before it, if there was one.
func poll(ctx context.Context, limit time.Duration, cond func(ctx context.Context) error) error {
	deadline := time.Now().Add(limit)
	var last, cut error
	for {
		check, cancel := context.WithTimeout(ctx, checkLimit)
		err := cond(check)
		interrupted := err != nil && check.Err() != nil
		cancel()
		switch {
		case err == nil:
			return nil
		case !interrupted || last == nil:
			last, cut = err, nil
		default:
			cut = err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("the test ended while waiting: %w", last)
		}
		if !time.Now().Before(deadline) {
			if cut != nil {
				return fmt.Errorf("still waiting after %v: %w (a last check did not finish: %v)", limit, last, cut)
			}
			return fmt.Errorf("still waiting after %v: %w", limit, last)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
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
