package reconcile

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/util/workqueue"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/internal/telemetry"
)

// DefaultReportAfter is how many consecutive failed attempts of a transient error the
// shell retries before it reports the error, unless WithReportAfter says otherwise.
const DefaultReportAfter = 3

// retryOptions are the options of the retry of failed reconciles.
type retryOptions struct {
	backoffFloor, backoffCeiling time.Duration // WithBackoff
	reportAfter                  int           // WithReportAfter
}

// WithBackoff sets the floor and the ceiling of the delay before an object whose reconcile
// failed is tried again: the delay starts at floor and doubles with each consecutive
// failure of that object, up to ceiling, and a success starts it again from floor. It is
// per object, so one object's failures do not slow the others; the controller's overall
// limit of 10 retries a second (bursts of 100) stays. A floor or ceiling of 0 keeps
// controller-runtime's (5ms, 1000s); a ceiling below the floor is the floor.
//
// The delays run on controller-runtime's workqueue, in real time: WithClock does not drive
// them. Each delay chosen is observed in the reconcilekit_retry_delay_seconds histogram
// of the kind (docs/observability.md), where a test or a dashboard reads them. The watch
// event of the status the shell writes for a failure is its own and brings no earlier
// retry.
func WithBackoff(floor, ceiling time.Duration) Option {
	return func(o *options) { o.retry.backoffFloor, o.retry.backoffCeiling = floor, ceiling }
}

// WithReportAfter sets how many consecutive failed attempts of a transient error (a
// timeout, a 429 or 5xx answer, a broken connection: see transient) the shell retries
// before reporting it as Reconciling, reason ReasonRetrying, with a Warning event. Until
// then a transient failure writes nothing, status or event, so that a flaky network or API
// server does not flap the object's Ready. Any other error is reported at once, and a
// conflict is never reported (it is a quiet requeue). 1 reports every failure;
// DefaultReportAfter otherwise.
func WithReportAfter(attempts int) Option {
	return func(o *options) { o.retry.reportAfter = attempts }
}

// rateLimiter returns the controller's rate limiter for WithBackoff, or nil for
// controller-runtime's default.
func (o *options) rateLimiter() workqueue.TypedRateLimiter[rtreconcile.Request] {
	if o.retry.backoffFloor <= 0 && o.retry.backoffCeiling <= 0 {
		return nil
	}
	floor, ceiling := o.retry.backoffFloor, o.retry.backoffCeiling
	if floor <= 0 {
		floor = 5 * time.Millisecond // controller-runtime's
	}
	if ceiling <= 0 {
		ceiling = 1000 * time.Second // controller-runtime's
	}
	ceiling = max(ceiling, floor)
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[rtreconcile.Request](floor, ceiling),
		&workqueue.TypedBucketRateLimiter[rtreconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// observedDelays is a rate limiter that observes each delay it chooses in
// telemetry.RetryDelay.
type observedDelays struct {
	workqueue.TypedRateLimiter[rtreconcile.Request]
	kind string
}

func (l observedDelays) When(req rtreconcile.Request) time.Duration {
	d := l.TypedRateLimiter.When(req)
	telemetry.RetryDelay.WithLabelValues(l.kind).Observe(d.Seconds())
	return d
}

// observed returns the controller's rate limiter for kind, controller-runtime's default
// without WithBackoff, its delays observed.
func (o *options) observed(kind string) workqueue.TypedRateLimiter[rtreconcile.Request] {
	limiter := o.rateLimiter()
	if limiter == nil {
		limiter = workqueue.DefaultTypedControllerRateLimiter[rtreconcile.Request]()
	}
	return observedDelays{limiter, kind}
}

// transient reports whether err is one that a retry is likely to cure by itself: the API
// server or the network failing for a moment, not a refusal a person must fix (forbidden,
// invalid, not found).
func transient(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 429 || code >= 500 || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
	}
	var netErr net.Error
	return errors.As(err, &netErr) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}

// failures counts each object's consecutive failed attempts.
type failures struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

func newFailures() *failures { return &failures{n: map[types.NamespacedName]int{}} }

// held notes an attempt of key with err (nil: a success), and reports whether its failure
// is to be retried without a word: a transient error that has not yet failed attempts times
// in a row.
func (f *failures) held(key types.NamespacedName, err error, attempts int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.n, key)
		return false
	}
	f.n[key]++
	return transient(err) && f.n[key] < attempts
}

// forget drops what is known of key, deleted.
func (f *failures) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.n, key)
}
