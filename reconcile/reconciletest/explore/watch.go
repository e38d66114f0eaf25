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

// How long Stale hides the objects its view lacks or holds the events its cache lags by,
// and how long Unobserved gathers the events of a series before it delivers the last of
// them. The lag outlasts the second by which package reconcile delays the reconciles a
// child's events ask for, so that those reconciles see the lagging view.
const (
	staleLag       = 2 * time.Second
	coalesceWindow = time.Second
)

// watch passes a watch on, recording its resource as a read point, and perturbs the
// events of the run's resource.
func (inc *incarnation) watch(r *reconciletest.Request) (*http.Response, error) {
	if r.Namespace != "" && r.Namespace != inc.namespace {
		return r.Send()
	}
	res := groupOf(r) + "/" + r.Resource
	inc.watched.Store(res, true)
	stale := inc.p.class == Stale && (inc.p.known != nil || inc.p.write > 0)
	perturbed := (stale || inc.p.class == Unobserved) && inc.p.res == res
	if !perturbed {
		resp, err := r.Send()
		if err == nil && resp.Body != nil {
			resp.Body = &watchedBody{ReadCloser: resp.Body, led: inc.led}
		}
		return resp, err
	}
	// Events the exploration reads: JSON, whatever the client asked for.
	r.HTTP.Header.Set("Accept", "application/json")
	resp, err := r.Send()
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	f := &watchFilter{class: inc.p.class, known: inc.p.known, in: resp.Body, pending: map[string]int{}}
	if inc.p.write > 0 {
		f.lag = inc.lag
	}
	inc.mu.Lock()
	for _, raw := range inc.hidden {
		f.hidden = append(f.hidden, heldEvent{raw: raw, due: f.hideUntil(time.Now()), key: eventKey(raw)})
	}
	inc.hidden = nil
	inc.mu.Unlock()
	pr, pw := io.Pipe()
	f.out = pw
	resp.Body = &watchedBody{ReadCloser: &filteredBody{PipeReader: pr, in: resp.Body}, led: inc.led}
	inc.mu.Lock()
	inc.filters = append(inc.filters, f)
	inc.mu.Unlock()
	go f.read()
	go f.deliver()
	return resp, nil
}

// watchFilter holds back or coalesces the events of one watch.
type watchFilter struct {
	class Class
	known map[string]bool // Stale at a list: the objects the lagging view holds
	lag   *lagWindow      // Stale at a read: when the watch holds every event back
	in    io.ReadCloser
	out   *io.PipeWriter

	mu      sync.Mutex
	queue   []heldEvent
	pending map[string]int       // Unobserved: the queue index of an object's held last event
	recent  map[string]time.Time // Unobserved: when an object's last event was delivered
	hidden  []heldEvent          // Stale: the events of the objects the view lacks
	until   time.Time            // Stale: when the hidden events are shown
	ended   bool
}

type heldEvent struct {
	raw json.RawMessage
	due time.Time
	key string
}

// watchedBody is the body of a watch of the operator, which notes in the ledger each
// delivery of events to it.
type watchedBody struct {
	io.ReadCloser
	led *ledger
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.led.deliver()
	}
	return n, err
}

type filteredBody struct {
	*io.PipeReader
	in io.ReadCloser
}

func (b *filteredBody) Close() error {
	b.in.Close()
	return b.PipeReader.Close()
}

func (f *watchFilter) holding() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return (len(f.queue) > 0 || len(f.hidden) > 0) && !f.ended
}

// hideUntil is when the hidden events are shown: staleLag after the first is hidden.
// Called with mu held.
func (f *watchFilter) hideUntil(now time.Time) time.Time {
	if f.until.IsZero() {
		f.until = now.Add(staleLag)
	}
	return f.until
}

// read takes each event of the watch and queues it: Stale delays every event by
// staleLag; Unobserved lets the first event of an object through and keeps only the last
// of those that follow it within coalesceWindow.
func (f *watchFilter) read() {
	dec := json.NewDecoder(f.in)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			f.mu.Lock()
			f.ended = true
			f.mu.Unlock()
			return
		}
		now := time.Now()
		f.mu.Lock()
		switch f.class {
		case Stale:
			// At a read: while the cache lags, every event is held until the lag ends,
			// and any that follows one still held, so that they arrive in order.
			// At a list: an object the view lacks stays hidden for staleLag, and
			// everything of it after; the rest passes, in order among itself.
			key := eventKey(raw)
			if until, lagging := f.lag.at(now); lagging || (f.lag != nil && len(f.hidden) > 0) {
				if lagging {
					f.until = until
				}
				f.hidden = append(f.hidden, heldEvent{raw: raw, due: f.until, key: key})
			} else if f.lag == nil && key != "" && !f.known[key] {
				f.hidden = append(f.hidden, heldEvent{raw: raw, due: f.hideUntil(now), key: key})
			} else {
				f.queue = append(f.queue, heldEvent{raw: raw, due: now, key: key})
			}
		default:
			key := eventKey(raw)
			if i, ok := f.pending[key]; ok && key != "" {
				f.queue[i].raw = raw // an intermediate event, never seen
			} else if key != "" && f.seen(key) {
				f.pending[key] = len(f.queue)
				f.queue = append(f.queue, heldEvent{raw: raw, due: now.Add(coalesceWindow), key: key})
			} else {
				f.queue = append(f.queue, heldEvent{raw: raw, due: now, key: key})
			}
		}
		f.mu.Unlock()
	}
}

// seen reports whether an event of key is queued or was delivered within the window,
// so that the next one is part of a series. Called with mu held.
func (f *watchFilter) seen(key string) bool {
	for _, e := range f.queue {
		if e.key == key {
			return true
		}
	}
	if t, ok := f.recent[key]; ok && time.Since(t) < coalesceWindow {
		return true
	}
	return false
}

// deliver writes the events that are due, in order.
func (f *watchFilter) deliver() {
	defer f.out.Close()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		f.mu.Lock()
		if len(f.hidden) > 0 && !time.Now().Before(f.until) {
			f.queue = append(f.queue, f.hidden...)
			f.hidden = nil
		}
		var due []heldEvent
		for len(f.queue) > 0 && !time.Now().Before(f.queue[0].due) {
			due = append(due, f.queue[0])
			f.queue = f.queue[1:]
			for k, i := range f.pending {
				if i == 0 {
					delete(f.pending, k)
				} else {
					f.pending[k] = i - 1
				}
			}
		}
		for _, e := range due {
			if e.key != "" {
				if f.recent == nil {
					f.recent = map[string]time.Time{}
				}
				f.recent[e.key] = time.Now()
			}
		}
		ended := f.ended && len(f.queue) == 0
		f.mu.Unlock()
		for _, e := range due {
			if _, err := f.out.Write(append(e.raw, '\n')); err != nil {
				f.in.Close()
				return
			}
		}
		if ended {
			return
		}
	}
}

// eventKey is the object an event is about, by namespace and name; "" for a bookmark or
// an error.
func eventKey(raw json.RawMessage) string {
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
		} `json:"object"`
	}
	if json.Unmarshal(raw, &ev) != nil || ev.Type == "BOOKMARK" || ev.Type == "ERROR" {
		return ""
	}
	return ev.Object.Metadata.Namespace + "/" + ev.Object.Metadata.Name
}

// staleList answers a list of the lagging resource without the objects the lagging view
// lacks, and keeps an ADDED event of each for the watch that follows the list, which
// shows them staleLag later.
func (inc *incarnation) staleList(r *reconciletest.Request) (*http.Response, error) {
	r.HTTP.Header.Set("Accept", "application/json")
	resp, err := r.Send()
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var list map[string]any
	if err := json.Unmarshal(body, &list); err != nil {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	items, _ := list["items"].([]any)
	kind := strings.TrimSuffix(fmt.Sprint(list["kind"]), "List")
	var kept []any
	var hidden []json.RawMessage
	for _, it := range items {
		obj, _ := it.(map[string]any)
		md, _ := obj["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string) // none for a cluster-scoped object
		name, _ := md["name"].(string)
		key := ns + "/" + name
		if inc.p.known[key] {
			kept = append(kept, it)
			continue
		}
		obj["kind"], obj["apiVersion"] = kind, list["apiVersion"]
		raw, _ := json.Marshal(map[string]any{"type": "ADDED", "object": obj})
		hidden = append(hidden, raw)
	}
	list["items"] = kept
	if kept == nil {
		list["items"] = []any{}
	}
	out, _ := json.Marshal(list)
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Del("Content-Length")
	inc.mu.Lock()
	inc.hidden = append(inc.hidden, hidden...)
	inc.mu.Unlock()
	return resp, nil
}
