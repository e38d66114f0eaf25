package reconciletest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// auditEvent is what the refusal watch reads of an audit event.
type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"` // the authorizer's decision among them
}

// message is the API server's message to the client.
func (ev auditEvent) message() string {
	if ev.ResponseStatus == nil || ev.ResponseStatus.Message == "" {
		return "no message"
	}
	return ev.ResponseStatus.Message
}

// refusalWatch reads the API server's audit log as it grows and hands every request the
// API server refused as forbidden to the watchers of its user and namespace: it sees every
// client, however the test built it.
type refusalWatch struct {
	path string

	mu       sync.Mutex
	watchers map[*refusalWatcher]bool
	stop     chan struct{}
	done     chan struct{}
}

// refusalWatcher is told of the refusals of one user in one namespace, and of those of the
// user outside any namespace.
type refusalWatcher struct {
	user, namespace string
	refused         func(auditEvent)
}

func watchRefusals(path string) *refusalWatch {
	w := &refusalWatch{path: path, watchers: map[*refusalWatcher]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go w.tail()
	return w
}

// watch tells refused of every refusal of user in namespace until the returned function is
// called.
func (w *refusalWatch) watch(user, namespace string, refused func(auditEvent)) (stop func()) {
	rw := &refusalWatcher{user: user, namespace: namespace, refused: refused}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchers[rw] = true
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.watchers, rw)
	}
}

// close stops the watch.
func (w *refusalWatch) close() {
	close(w.stop)
	<-w.done
}

// tail reads the log from its start as it grows, and the next one when the API server
// rotates it: a poll every few milliseconds, which is how soon a refusal is known, costs a
// read that finds nothing new.
func (w *refusalWatch) tail() {
	defer close(w.done)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var (
		f       *os.File
		partial []byte // a line not yet written whole
	)
	defer func() {
		if f != nil {
			_ = f.Close()
		}
	}()
	buf := make([]byte, 64<<10)
	readAll := func() {
		for {
			n, err := f.Read(buf)
			partial = append(partial, buf[:n]...)
			for {
				line, rest, ok := bytes.Cut(partial, []byte("\n"))
				if !ok {
					break
				}
				w.line(line)
				partial = rest
			}
			partial = append([]byte(nil), partial...) // let the lines read go
			if n == 0 || err != nil {                 // io.EOF: all there is, for now
				return
			}
		}
	}
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		if f == nil {
			var err error
			if f, err = os.Open(w.path); err != nil {
				continue // not written yet
			}
		}
		readAll()
		if rotated(f, w.path) {
			readAll() // what was written between the read and the rotation
			_ = f.Close()
			f, partial = nil, nil
		}
	}
}

// rotated reports whether the file at path is no longer f.
func rotated(f *os.File, path string) bool {
	now, err := os.Stat(path)
	if err != nil {
		return false // between the rename and the new file
	}
	was, err := f.Stat()
	return err == nil && !os.SameFile(was, now)
}

// line hands the event of one line of the log to its watchers if it is a refusal.
func (w *refusalWatch) line(line []byte) {
	if !bytes.Contains(line, []byte(`"code":403`)) {
		return // most lines: not worth decoding
	}
	var ev auditEvent
	if err := json.Unmarshal(line, &ev); err != nil || ev.ResponseStatus == nil || ev.ResponseStatus.Code != http.StatusForbidden {
		return
	}
	namespace := ""
	if ev.ObjectRef != nil {
		namespace = ev.ObjectRef.Namespace
	}
	w.mu.Lock()
	var told []*refusalWatcher
	for rw := range w.watchers {
		if rw.user == ev.User.Username && (namespace == "" || namespace == rw.namespace) {
			told = append(told, rw)
		}
	}
	w.mu.Unlock()
	for _, rw := range told {
		rw.refused(ev)
	}
}

// errTestStopped is what a request of a test's namespace gets, instead of an answer, once
// the test has been stopped for a refusal: a test blocked in a watch or a poll of a client
// of its own sees it at once, rather than at its own timeout.
var errTestStopped = errors.New("reconciletest: not sent: the test stops, the operator was refused a request (reported above)")

// tripwire cuts the requests of a stopped test's namespace made with ControlPlane.Config:
// its open watches end, and what it sends next fails with errTestStopped.
type tripwire struct {
	mu   sync.Mutex
	cuts map[string]chan struct{} // by namespace; closed when cut
}

// arm makes namespace's requests cuttable until the returned function is called, and
// returns the function that cuts them.
func (w *tripwire) arm(namespace string) (cut, disarm func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cuts == nil {
		w.cuts = map[string]chan struct{}{}
	}
	w.cuts[namespace] = ch
	var once sync.Once
	cut = func() { once.Do(func() { close(ch) }) }
	disarm = func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.cuts[namespace] == ch {
			delete(w.cuts, namespace)
		}
	}
	return cut, disarm
}

// hook is the tripwire's place in ControlPlane.Config.
func (w *tripwire) hook(r *Request) (*http.Response, error) {
	w.mu.Lock()
	ch := w.cuts[r.Namespace]
	w.mu.Unlock()
	if ch == nil {
		return r.Send()
	}
	select {
	case <-ch:
		return nil, errTestStopped
	default:
	}
	resp, err := r.Send()
	if err != nil || r.Verb != "watch" {
		return resp, err // an answer other than a watch's ends by itself
	}
	body := &cutBody{ReadCloser: resp.Body, cut: ch, closed: make(chan struct{})}
	resp.Body = body
	go func() {
		select {
		case <-ch:
			_ = body.ReadCloser.Close() // the watch's reader sees its stream end
		case <-body.closed:
		}
	}()
	return resp, nil
}

// cutBody is a watch's stream, which the tripwire may close under its reader: the reader
// then sees the stream end, as when the API server ends a watch, rather than an error.
type cutBody struct {
	io.ReadCloser
	cut    <-chan struct{}
	once   sync.Once
	closed chan struct{}
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		select {
		case <-b.cut:
			return n, io.EOF
		default:
		}
	}
	return n, err
}

func (b *cutBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}
