package controller_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// operator is the memcached operator on a cluster of simulated nodes that the tests share,
// each in a namespace of its own, with the role generated from its RBAC markers as its
// only permissions.
var operator = &reconciletest.Operator{
	User:           "memcached-operator",
	AddToScheme:    cachev1beta1.AddToScheme,
	CRDDirectories: []string{filepath.Join("..", "config", "crd", "bases")},
	Role:           filepath.Join("..", "config", "rbac", "role.yaml"),
	Nodes:          2,
	Controllers:    []reconcile.Declaration{controller.New()},
	// What cmd/main.go adds to controller.New's declaration and the tests' managers do not
	// run (webhooks_test.go serves them on a manager of its own): the validating webhook's
	// uncached reads of ConfigMaps (get), and the storage migration, which lists every
	// Memcached and patches each (get, list, patch of memcacheds and their status).
	Unchecked: []string{"configmaps", "memcacheds.cache.example.com", "memcacheds/status.cache.example.com"},
}

// logs keeps what the operators log, for tests that prove what an operator says.
var logs lines

func TestMain(m *testing.M) {
	// The operator's logs, shown when a test fails.
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(os.Stderr, &logs))))
	os.Exit(operator.Main(m))
}

// env is a test's corner of the cluster, with what the tests of this operator add to it.
type env struct{ *reconciletest.Env }

func newEnv(t *testing.T) *env { return &env{operator.Env(t)} }

// lines is a log that many goroutines write.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Containing returns the lines that contain every one of parts.
func (l *lines) Containing(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []string
next:
	for line := range strings.Lines(l.buf.String()) {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		found = append(found, strings.TrimSpace(line))
	}
	return found
}
