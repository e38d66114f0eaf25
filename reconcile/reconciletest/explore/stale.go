package explore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The points of Stale are where an operator reads a resource through its cache while the
// cache lags. Its reads through the cache (a reconcile's client.Get and List) never reach
// the API server, and a read sent to it without a resourceVersion is consistent: what
// lags in a real cluster is the cache, whose list (resourceVersion=0) the API server
// answers from its watch cache and whose watch delivers the changes late. A cache shows
// a resource as its watch last delivered it, so the views a read can be given are those
// between two events of the resource; of them, Stale takes those that lag what the
// operator itself wrote, at every read that follows one of its writes, and those a list
// gets from a lagging watch cache, at each restart once a step has settled:
//
//   - stale@resource@writeN: from the operator's Nth write on (numbered as for fail@N,
//     among every write of the run), the watch events of the written resource are held
//     back for staleLag, the write's own among them. Every read of the resource meanwhile,
//     the first read after the write and those after it, sees the view before the write,
//     and the reconciles the held events ask for come late. A point for each write the
//     reference run had accepted on a resource the operator watches: the events the
//     workload's steps cause only delay a reconcile when they lag, and the view of
//     what a step created is the list's points.
//   - stale@resource@stepI: once step I has settled, the operator restarts, and the
//     objects of the resource that the step created are missing from its list (and its
//     watch's first events) for staleLag. A point for each step that created objects of
//     the resource in the reference run: elsewhere the lagging view is the current one,
//     and the restart the reference run makes after every step.

// stalePoints are the Stale points given the reference run ref of a workload of steps
// steps: each resource's points at a list, then at a read.
func stalePoints(ref *result, steps int) []perturbation {
	var ps []perturbation
	for _, res := range ref.watched {
		for i := range steps {
			if createdIn(ref.views, res, i) {
				ps = append(ps, perturbation{class: Stale, res: res, n: i + 1})
			}
		}
	}
	for i, w := range ref.writes {
		res := w.Group + "/" + w.Resource
		if w.accepted() && slices.Contains(ref.watched, res) {
			ps = append(ps, perturbation{class: Stale, res: res, write: i + 1})
		}
	}
	return ps
}

// createdIn reports whether step i created objects of res, as the views of the
// reference run show; true if they do not cover res then (a resource first watched
// later), for the point may hide something.
func createdIn(views []map[string]map[string]bool, res string, i int) bool {
	if i+1 >= len(views) {
		return true
	}
	before, ok := views[i][res]
	after, ok2 := views[i+1][res]
	if !ok || !ok2 {
		return true
	}
	for name := range after {
		if !before[name] {
			return true
		}
	}
	return false
}

// view is the namespace/name of every object of each resource watched in namespace.
func (ex *explorer) view(t testing.TB, ctx context.Context, c client.Client, namespace string, watched *sync.Map) map[string]map[string]bool {
	v := map[string]map[string]bool{}
	watched.Range(func(k, _ any) bool {
		v[k.(string)] = ex.names(t, ctx, c, namespace, k.(string))
		return true
	})
	return v
}

// lagWindow is when the cache of a run's operator lags: from the write of its Stale
// point for staleLag. Its lock is its own: the watch filters ask it while they hold
// theirs.
type lagWindow struct {
	mu    sync.Mutex
	until time.Time
}

// start begins the lag at now; once only.
func (l *lagWindow) start(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until.IsZero() {
		l.until = now.Add(staleLag)
	}
}

// at reports whether the cache lags at now, and until when; never for a nil window.
func (l *lagWindow) at(now time.Time) (until time.Time, lagging bool) {
	if l == nil {
		return time.Time{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until, !l.until.IsZero() && now.Before(l.until)
}
