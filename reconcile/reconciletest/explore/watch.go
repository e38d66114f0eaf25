package explore

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// How long Stale holds each watch event back, and how long Unobserved gathers the events
// of a series before it delivers the last of them.
const (
	staleLag       = time.Second
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
	perturbed := (inc.p.class == Stale || inc.p.class == Unobserved) && inc.p.res == res
	if !perturbed {
		return r.Send()
	}
	// Events the exploration reads: JSON, whatever the client asked for.
	r.HTTP.Header.Set("Accept", "application/json")
	resp, err := r.Send()
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	f := &watchFilter{class: inc.p.class, in: resp.Body, pending: map[string]int{}}
	pr, pw := io.Pipe()
	f.out = pw
	resp.Body = &filteredBody{PipeReader: pr, in: resp.Body}
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
	in    io.ReadCloser
	out   *io.PipeWriter

	mu      sync.Mutex
	queue   []heldEvent
	pending map[string]int       // Unobserved: the queue index of an object's held last event
	recent  map[string]time.Time // Unobserved: when an object's last event was delivered
	ended   bool
}

type heldEvent struct {
	raw json.RawMessage
	due time.Time
	key string
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
	return len(f.queue) > 0 && !f.ended
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
			f.queue = append(f.queue, heldEvent{raw: raw, due: now.Add(staleLag)})
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
