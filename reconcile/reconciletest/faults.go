package reconciletest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"

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
	return Intercept(cfg, func(r *Request) (*http.Response, error) {
		if !f.strike(r) {
			return r.Send()
		}
		return f.fail(r), nil
	})
}

// Injected returns how many requests have failed so far.
func (f *Faults) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// strike decides whether r fails, and counts it if so.
func (f *Faults) strike(r *Request) bool {
	if len(f.Verbs) > 0 && !slices.Contains(f.Verbs, r.Verb) ||
		len(f.Resources) > 0 && !slices.Contains(f.Resources, r.resource()) {
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

// fail answers r as the API server would fail it.
func (f *Faults) fail(r *Request) *http.Response {
	code := f.Code
	if code == 0 {
		code = http.StatusInternalServerError
	}
	return r.Fail(code, strings.TrimSpace(fmt.Sprintf("fault injected by reconciletest: %s %s %s", r.Verb, r.resource(), r.Name)))
}
