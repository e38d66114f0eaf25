package reconciletest

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/reconcilekit/reconcilekit/ownership"
)

// quietSink is the log of a manager a test runs: the manager's own log (its Options.Logger,
// or controller-runtime's global one), with two changes that keep a failing test's first
// words its cause. An error the test reports itself ends the manager's log for that test: a
// child of a kind the declaration does not own is reported at once, as the test's failure,
// and a request the API server refused is reported by Env (with the marker to add). Any
// other error is logged without the stack trace a logger would add, so that the cause is not
// buried under the controller's goroutine.
type quietSink struct {
	logr.LogSink
	*logState
	depth int
}

// logState is what the log of one manager shares with the test that runs it.
type logState struct {
	quiet atomic.Bool // the test has reported its failure: nothing more is logged

	mu   sync.Mutex
	fail func(message string) // reports a failure the log saw; report by default

	// namespaces names the setting of the namespaces the manager's cache watches, for a
	// read outside them: Env.Namespaces; the manager's own option if empty.
	namespaces string
}

// failed reports message through the state's fail.
func (l *logState) failed(message string) {
	l.mu.Lock()
	fail := l.fail
	l.mu.Unlock()
	fail(message)
}

// quietLogger wraps base for a manager whose log state is l.
func quietLogger(base logr.Logger, l *logState) logr.Logger {
	if base.GetSink() == nil {
		return base
	}
	return logr.New(quietSink{LogSink: base.GetSink(), logState: l})
}

func (s quietSink) Init(info logr.RuntimeInfo) {
	info.CallDepth += s.depth + 1
	s.LogSink.Init(info)
}

func (s quietSink) Info(level int, msg string, keysAndValues ...any) {
	if !s.quiet.Load() {
		s.LogSink.Info(level, msg, keysAndValues...)
	}
}

func (s quietSink) Error(err error, msg string, keysAndValues ...any) {
	switch {
	case s.quiet.Load():
	case ownership.IsUndeclared(err):
		if s.quiet.CompareAndSwap(false, true) {
			s.failed("reconciletest: the operator's declaration does not own a kind its logic writes, so the manager would not watch it: " + cause(err).Error())
		}
	case outsideCache(err):
		if s.quiet.CompareAndSwap(false, true) {
			s.mu.Lock()
			field := s.namespaces
			s.mu.Unlock()
			if field == "" {
				field = "the manager's Options.Cache.DefaultNamespaces"
			}
			s.failed(fmt.Sprintf("reconciletest: the operator read its cache in a namespace the cache does not watch: %v. Add the namespace to %s before the operator starts, or reconciletest.AllNamespaces in it for every one", err, field))
		}
	case apierrors.IsForbidden(err):
		// Env reports the refusal, with the marker that grants what the role lacks.
	default:
		s.LogSink.Info(0, msg, append([]any{"error", err}, keysAndValues...)...)
	}
}

func (s quietSink) WithValues(keysAndValues ...any) logr.LogSink {
	s.LogSink = s.LogSink.WithValues(keysAndValues...)
	return s
}

func (s quietSink) WithName(name string) logr.LogSink {
	s.LogSink = s.LogSink.WithName(name)
	return s
}

func (s quietSink) WithCallDepth(depth int) logr.LogSink {
	if d, ok := s.LogSink.(logr.CallDepthLogSink); ok {
		s.LogSink = d.WithCallDepth(depth)
		return s
	}
	s.depth += depth
	return s
}

// cause unwraps err down to the ownership refusal, without the wrapping of the reconcile
// (a terminal error) that says nothing more.
func cause(err error) error {
	var u *ownership.UndeclaredError
	if errors.As(err, &u) {
		return u
	}
	return err
}

// report fails t with message, written to standard error at once too: a test's own output
// is printed when it ends, after whatever the processes it runs printed meanwhile, and the
// cause must be the first thing a person reads.
func report(t testing.TB, message string) {
	fmt.Fprintln(os.Stderr, message)
	t.Errorf("%s", message)
}
