package reconciletest

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"

	"k8s.io/client-go/rest"
)

// Counter counts the requests a client sends to the API server, by verb and resource.
// It sits in the HTTP transport, so it sees only real requests: a read served from an
// informer cache never reaches it, which is what a test of an operator's cost wants.
//
// The zero value is ready to use, and a Counter is safe for concurrent use.
type Counter struct {
	mu     sync.Mutex
	counts map[counted]int
}

// counted is what a Counter tells requests apart by.
type counted struct {
	verb     string
	resource string // with its subresource, as RBAC rules name it: "memcacheds/status"
}

// Wrap returns a copy of cfg whose requests c counts. Every client built from the copy,
// a manager's included, is counted.
func (c *Counter) Wrap(cfg *rest.Config) *rest.Config {
	return Intercept(cfg, func(r *Request) (*http.Response, error) {
		c.add(counted{verb: r.Verb, resource: r.resource()})
		return r.Send()
	})
}

func (c *Counter) add(r counted) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = make(map[counted]int)
	}
	c.counts[r]++
}

// Count returns how many requests had the verb on the resource. Verbs and resources are
// named as the API server names them: verbs get, list, watch, create, update, patch,
// delete and deletecollection; resources like "deployments" or "memcacheds/status".
func (c *Counter) Count(verb, resource string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[counted{verb: verb, resource: resource}]
}

// Writes returns how many requests changed, or tried to change, state on the server:
// creates, updates, patches and deletes.
func (c *Counter) Writes() int {
	return c.sum(func(r counted) bool { return isWrite(r.verb, r.resource) })
}

// Reads returns how many gets and lists of resources were sent. Watches are not reads:
// one is open for as long as an informer runs.
func (c *Counter) Reads() int {
	return c.sum(func(r counted) bool {
		return (r.verb == "get" || r.verb == "list") && !strings.HasPrefix(r.resource, "/")
	})
}

func (c *Counter) sum(match func(counted) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for r, count := range c.counts {
		if match(r) {
			n += count
		}
	}
	return n
}

// Reset forgets every request counted so far.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
}

// String returns the counts as a table, one line per verb and resource, for failure
// messages.
func (c *Counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.counts) == 0 {
		return "no requests\n"
	}
	keys := slices.SortedFunc(maps.Keys(c.counts), func(a, b counted) int {
		return cmp.Or(cmp.Compare(a.resource, b.resource), cmp.Compare(a.verb, b.verb))
	})
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, k := range keys {
		fmt.Fprintf(w, "%6d\t%s\t%s\n", c.counts[k], k.verb, k.resource)
	}
	_ = w.Flush()
	return b.String()
}

// ExpectNoWrites fails the test if do sends any write through c: the proof that
// reconciling an object that has converged leaves it, and everything it owns, alone.
// It resets c first, so only the writes of do count.
func ExpectNoWrites(t testing.TB, c *Counter, do func()) {
	t.Helper()
	c.Reset()
	do()
	if n := c.Writes(); n > 0 {
		t.Errorf("expected no writes, got %d; the requests were:\n%s", n, c)
	}
}
