// Package telemetry holds the metrics that the reconcile shell and ownership.Ensure both
// record, registered on controller-runtime's registry when a manager is made from controller
// declarations, so that every manager serves them on its metrics endpoint. docs/observability.md describes each series.
package telemetry

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The label values of Writes' write label.
const (
	Status   = "status"   // the status subresource of the reconciled object
	Metadata = "metadata" // labels, annotations and finalizers of the reconciled object
	Create   = "create"   // a child created
	Update   = "update"   // a child applied or patched
	Delete   = "delete"   // a child deleted
)

// The label values of Deferred's write label.
const (
	Own   = "own"   // the reconciled object's own last write
	Child = "child" // a write of one of its children
)

// The label values of Reconciles' outcome label.
const (
	Done     = "done"
	After    = "after"
	Retry    = "retry"
	Terminal = "terminal"
	Conflict = "conflict"
)

var (
	// Reconciles counts the shell's reconciles by their outcome.
	Reconciles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reconcilekit_reconciles_total",
		Help: "Reconciles the shell finished, by the kind reconciled and the outcome (done, after, retry, terminal, conflict).",
	}, []string{"kind", "outcome"})

	// Writes counts the write requests the library sent and the API server accepted.
	Writes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reconcilekit_writes_total",
		Help: "Write requests the library sent, by the kind written, the write (status, metadata, create, update, delete) and whether the object changed.",
	}, []string{"kind", "write", "changed"})

	// Fights counts the fights detected: someone else kept undoing the library's writes.
	Fights = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reconcilekit_fights_total",
		Help: "Fights detected over an object the library writes (someone else keeps undoing its writes), by the kind fought over and the write.",
	}, []string{"kind", "write"})

	// BackedOff counts the writes the library did not send because it was backing off
	// from a fight.
	BackedOff = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reconcilekit_writes_backed_off_total",
		Help: "Writes the library held back because it was backing off from a fight over the object, by kind and write.",
	}, []string{"kind", "write"})

	// Deferred counts the reconciles put off because the cache had yet to show the library's
	// own last write: each is a reconcile that would have decided from a stale copy.
	Deferred = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reconcilekit_reconciles_deferred_total",
		Help: "Reconciles put off until the cache showed the library's last write, by the kind reconciled and whose write it was (own: the object's; child: a child's).",
	}, []string{"kind", "write"})

	// RetryDelay observes each delay the controller's backoff chose before a failed
	// reconcile is tried again: the backoff runs on the workqueue's real clock, so this is
	// where its choices can be read.
	RetryDelay = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "reconcilekit_retry_delay_seconds",
		Help:    "Delays the backoff chose before a failed reconcile was tried again, by the kind reconciled.",
		Buckets: prometheus.ExponentialBuckets(0.005, 4, 10),
	}, []string{"kind"})
)

// Register registers the series on controller-runtime's registry, with more collectors of
// the caller's; series already registered (by another manager of the process) are kept.
// Nothing is registered on import: a program that builds no controller serves none of them.
func Register(more ...prometheus.Collector) error {
	for _, c := range append([]prometheus.Collector{Reconciles, Writes, Fights, BackedOff, Deferred, RetryDelay}, more...) {
		if err := metrics.Registry.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// Wrote counts one accepted write of an object of kind.
func Wrote(kind, write string, changed bool) {
	c := "false"
	if changed {
		c = "true"
	}
	Writes.WithLabelValues(kind, write, c).Inc()
}
