package reconcile

import (
	"reflect"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The unexported pieces of the wiring, for the tests.
var Coalesce = coalesce

const (
	CoalesceDelay     = coalesceDelay
	ReadinessPriority = readinessPriority
	TestFieldOwner    = "reconcilekit-test"
)

// Shell is the shell a declaration makes, for the tests that drive it piece by piece.
type Shell[T client.Object] struct{ *shell[T] }

// NewShell returns the shell of For(an empty T, logic, TestFieldOwner, opts...), reading
// and writing through c. It panics on a declaration that cannot run.
func NewShell[T client.Object](c client.Client, logic Logic[T], opts ...Option) Shell[T] {
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	return ShellOf(c, For(obj, logic, TestFieldOwner), opts...)
}

// OverrideFieldOwner makes the shell write as name rather than as the declaration's field
// owner.
func OverrideFieldOwner(name string) Option { return func(o *options) { o.fieldOwner = name } }

// ShellOf returns the shell of d with opts added, reading and writing through c. It panics
// on a declaration that cannot run.
func ShellOf[T client.Object](c client.Client, d *Controller[T], opts ...Option) Shell[T] {
	s, err := d.With(opts...).shell(c, c)
	if err != nil {
		panic(err)
	}
	if err := register(s.metrics); err != nil {
		panic(err)
	}
	return Shell[T]{s}
}

// IgnoreOwnWrites is the predicate of the watch of the reconciled kind.
func (s Shell[T]) IgnoreOwnWrites() predicate.Predicate { return s.ignoreOwnWrites() }

// EnqueueOwner is the handler of child's kind, a child kind of owner's kind.
func (s Shell[T]) EnqueueOwner(c cluster.Cluster, owner, child client.Object) handler.EventHandler {
	return s.enqueueOwner(c, owner, child)
}

// Behind puts the shell behind g.
func (s Shell[T]) Behind(g Gate) Shell[T] { s.gate = g; return s }

// Bereaved returns how many owners the shell has noted for a fresh read.
func (s Shell[T]) Bereaved() int {
	s.bereaved.mu.Lock()
	defer s.bereaved.mu.Unlock()
	return len(s.bereaved.owners)
}

// RateLimiter is the controller's rate limiter the options give, nil for
// controller-runtime's default.
func RateLimiter(opts ...Option) workqueue.TypedRateLimiter[rtreconcile.Request] {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o.rateLimiter()
}

// ObservedRateLimiter is the rate limiter of a controller of kind with the options, its
// delays observed.
func ObservedRateLimiter(kind string, opts ...Option) workqueue.TypedRateLimiter[rtreconcile.Request] {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o.observed(kind)
}
