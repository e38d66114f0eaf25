package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// write is one write of the operator, as the API server answered it.
type write struct {
	Verb, Resource, Subresource, Name string
	// Group is the resource's API group, "" for the core group.
	Group string
	// Code is the HTTP status of the answer; 0 if the request never got one.
	Code int
	// Incarnation is the operator's: 1 for the first manager of the run, 2 after a restart.
	Incarnation int
	// Step is the index of the workload step during which it was sent.
	Step int
	// Phase is, in a spec run, "transition" for a write sent while the operator acted on
	// the transition, "restore" while it acted on the spec written back; "" otherwise.
	Phase string
	// Object is the object the answer carried, if any.
	Object map[string]any
	// Injected says the answer was the exploration's, not the API server's.
	Injected bool
}

func (w write) accepted() bool { return w.Code >= 200 && w.Code < 300 }

func (w write) resource() string {
	if w.Subresource != "" {
		return w.Resource + "/" + w.Subresource
	}
	return w.Resource
}

func (w write) String() string {
	code := fmt.Sprint(w.Code)
	if w.Injected {
		code += " (injected)"
	}
	return fmt.Sprintf("%s %s %s → %s", w.Verb, w.resource(), w.Name, code)
}

// ledger records the requests of every incarnation of the operator in one run.
type ledger struct {
	mu       sync.Mutex
	writes   []write
	last     time.Time // when the last request other than a watch was sent or answered, or an event delivered
	lastR    time.Time // when the last request other than a watch was sent or answered
	lastW    time.Time // when the last write was answered
	step     int
	phase    string
	requests int
	// inflight counts the requests other than watches sent and not yet answered: an
	// operator waiting for an answer is not idle, however long the answer takes.
	inflight int
	// delivered counts the reads of the operator's watches that brought it something:
	// events, at least one each.
	delivered int
}

func (l *ledger) touch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last, l.lastR = time.Now(), time.Now()
	l.requests++
}

// begin notes a request sent; the func it returns, its answer.
func (l *ledger) begin() (end func()) {
	l.touch()
	l.mu.Lock()
	l.inflight++
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.inflight--
		l.mu.Unlock()
		l.touch()
	}
}

// sentSince reports whether the operator has sent a request other than a watch since t.
func (l *ledger) sentSince(t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastR.After(t)
}

// deliver notes that a watch of the operator has delivered something to it: it is
// not idle, for it reacts to what it is shown.
func (l *ledger) deliver() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = time.Now()
	l.delivered++
}

// events is how many reads of its watches have delivered something to the operator.
func (l *ledger) events() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.delivered
}

// idleFor is how long the operator has sent nothing and been delivered nothing, and
// waited for no answer; zero while it waits for one.
func (l *ledger) idleFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight > 0 {
		return 0
	}
	return time.Since(l.last)
}

func (l *ledger) writeIdleFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.lastW)
}

func (l *ledger) add(w write) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	w.Step, w.Phase = l.step, l.phase
	l.writes = append(l.writes, w)
	l.last, l.lastW = time.Now(), time.Now()
	return len(l.writes)
}

func (l *ledger) snapshot() []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]write(nil), l.writes...)
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.writes)
}

// setPhase marks the writes from now on as made in phase (write.Phase).
func (l *ledger) setPhase(phase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phase = phase
}

func (l *ledger) setStep(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.step = i
}

// groupOf returns the API group of a request's path: /api/v1/... is the core group,
// /apis/GROUP/VERSION/... any other.
func groupOf(r *reconciletest.Request) string {
	segments := strings.Split(strings.Trim(r.HTTP.URL.Path, "/"), "/")
	if len(segments) > 2 && segments[0] == "apis" {
		return segments[1]
	}
	return ""
}

// readAnswer reads an answer's body, leaving it readable for the client, and decodes it
// as a JSON object; nil if it is none.
func readAnswer(resp *http.Response) map[string]any {
	if resp == nil || resp.Body == nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return nil
	}
	return obj
}

// nameOf is the name of the object a write is about: a create names it in its body, or
// the answer does.
func nameOf(r *reconciletest.Request, obj map[string]any) string {
	if r.Name != "" {
		return r.Name
	}
	if obj != nil && obj["kind"] != "Status" {
		if md, ok := obj["metadata"].(map[string]any); ok {
			if n, _ := md["name"].(string); n != "" {
				return n
			}
			if g, _ := md["generateName"].(string); g != "" {
				return g + "<generated>"
			}
		}
	}
	return "?"
}
