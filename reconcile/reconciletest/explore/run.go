package explore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// runIn makes the run res in t: the operator started, settled, then each step of the
// workload made, settled and judged, and what the run did and left recorded.
func (ex *explorer) runIn(t *testing.T, res *result) {
	r := ex.begin(t, res)
	defer r.release()
	r.start(res.p)
	r.settle(-1)
	if res.p.class == "" {
		r.view()
	}
	for i, s := range ex.x.Workload {
		if res.p.drop[i] {
			continue
		}
		if res.p.class == scratch && res.p.tr.step == i {
			r.fromScratch(i, s) // the object's state once settled is what the run is for
			return
		}
		switch r.step(i, s) {
		case abandon:
			return
		case stopSteps:
			r.end()
			return
		}
	}
	r.end()
}

// run is one run of the workload under way: the operator's Env and its incarnation of the
// moment, the ledger of its requests, and what its settling waits for. Its methods are
// the steps of a run, in runIn.
type run struct {
	ex      *explorer
	t       *testing.T
	ctx     context.Context
	res     *result
	e       *reconciletest.Env
	base    *rest.Config // the Env's, before an incarnation's hook
	admin   client.Client
	led     *ledger
	watched *sync.Map

	inc          *incarnation
	incarnations int
	// alone says the run holds the world alone (exclusive), not shared.
	alone bool

	// expected are the reconciles the operator must have finished to be settled.
	expected float64
	// awaited is the events the operator's watches must have delivered to it before it
	// can be settled: the event of a step on one of its objects, which it reconciles. A
	// per-run guard that the process-wide count of reconciles, which the operators of the
	// runs made at once share, cannot give. A new operator lists instead.
	awaited int
	// since is when the operator was last given something to do: a step or a transition
	// on one of its objects, which it reacts to with a request or not at all, or a start,
	// after which it reconciles each of its objects, sending nothing for those that have
	// converged. It is settled only once it has sent a request since, or has had longer
	// than its children's events may take to react: with runs made at once, the count of
	// reconciles cannot tell that it has not reconciled yet (a fresh operator's workers
	// start a moment after its cache has synced). notBefore is when a started operator
	// may have reconciled what it found.
	since, notBefore time.Time
}

// next is what a run does once a step is done.
type next int

const (
	nextStep  next = iota // the workload's next step
	stopSteps             // no further step: the run ends, and what it left is read
	abandon               // nothing more: a step failed while shrinking (result.broken)
)

// begin takes an Env of the operator for res and the world, shared: the run holds it
// shared, but alone while it counts reconciles; it lets go of it whenever its operator
// has settled, so that a run that wants it alone waits no longer than for the others to
// settle.
func (ex *explorer) begin(t *testing.T, res *result) *run {
	e := ex.x.Operator.Env(t)
	res.namespace = e.Namespace
	for _, ns := range ex.x.Namespaces {
		e.Namespaces = append(e.Namespaces, strings.ReplaceAll(ns, Namespace, e.Namespace))
	}
	world.RLock()
	return &run{ex: ex, t: t, ctx: t.Context(), res: res, e: e, base: e.Config, admin: ex.admin(t), led: &ledger{}, watched: &sync.Map{}}
}

// release lets go of the world.
func (r *run) release() {
	if r.alone {
		world.Unlock()
	} else {
		world.RUnlock()
	}
}

// yield lets the runs that wait for the world alone have it.
func (r *run) yield() {
	world.RUnlock()
	world.RLock()
}

// exclusive takes the world alone (on) or gives it back to be shared.
func (r *run) exclusive(on bool) {
	if on {
		world.RUnlock()
		world.Lock()
	} else {
		world.Unlock()
		world.RLock()
	}
	r.alone = on
}

// start starts an incarnation of the operator under p and waits for its cache to sync.
func (r *run) start(p perturbation) {
	ex := r.ex
	r.awaited = 0
	r.incarnations++
	r.inc = &incarnation{n: r.incarnations, p: p, led: r.led, killed: make(chan struct{}), watched: r.watched, admin: r.admin, ours: ex.ours, kinds: ex.kinds, namespace: r.e.Namespace, clusterScoped: ex.clusterScoped, lag: &lagWindow{}, normalise: ex.normalise}
	r.e.Config = reconciletest.Intercept(rest.CopyConfig(r.base), r.inc.hook)
	n := r.ours()
	r.expected = reconciles() + float64(n)
	began := time.Now()
	m := r.e.Run(r.t)
	r.inc.stop = m.Stop
	if !m.GetCache().WaitForCacheSync(r.ctx) {
		r.t.Fatalf("explore: the operator's cache did not sync")
	}
	// Its lists are requests: only time tells that it has reconciled what it found,
	// the more of it the slower the machine (its start and sync tell how slow).
	r.since = time.Time{}
	if n > 0 {
		r.notBefore = time.Now().Add(childDelay + 2*time.Since(began))
	}
}

// ours counts the objects of the operator's kinds in the namespace: a new operator
// reconciles each of them before it can be judged settled.
func (r *run) ours() int {
	objs, err := objectsOf(r.ctx, r.admin, r.e.Namespace, r.ex.ourKinds())
	if err != nil {
		r.t.Fatalf("explore: %v", err)
	}
	return len(objs)
}

// reacted reports whether the operator has reacted to what it was last given (since).
func (r *run) reacted() bool {
	return time.Now().After(r.notBefore) && (r.since.IsZero() || r.led.sentSince(r.since) || time.Since(r.since) >= childDelay)
}

// settle waits until the operator is quiet, restarting it if it was killed, and has the
// oracles judge how the wait ended (atSettling): it has made the reconciles expected of
// it, been delivered the event of the step, sent nothing and been delivered nothing for
// Quiet, and written nothing for longer than the reconciles a child's change asks for may
// be delayed; and its objects show no work owed (owed): what decides it, for a restarted
// operator, whose reconciles of what it found no count of the process can tell apart from
// the other runs', and for a retry after a failure, whose backoff outlasts any quiet
// window. (The queues' metrics cannot tell: they are the process's, and a stopped
// manager's stay as it left them. The count of reconciles is the process's too: with runs
// made at once, the other runs' operators add to it, and it only bounds this one's from
// above.)
func (r *run) settle(step int) {
	began, before := time.Now(), r.led.count()
	s := r.wait(step, r.ex.settleLimit(step), before)
	if _, ok := r.res.paces[step]; !ok {
		r.res.paces[step] = pace{took: time.Since(began), writes: r.led.count() - before}
	}
	if s.outOfTime != "" {
		r.res.outOfTime = true
	}
	r.judge(atSettling, &evidence{step: step, settling: s})
}

// wait waits for the operator to settle after step, for limit or 200 writes from before at
// most, and says how the wait ended.
func (r *run) wait(step int, limit time.Duration, before int) settling {
	deadline := time.Now().Add(limit)
	owedOnly := "" // what it owed when it was last quiet but for that
	for {
		if r.restartIfKilled() {
			continue
		}
		if r.t.Failed() {
			// A refusal, or an error the manager's log saw, failed the run and cut its
			// requests (Env.Run): what it waits for will not come, and its next step
			// stops it, naming the cause, rather than after the settle limit.
			return settling{}
		}
		wait := 20 * time.Millisecond
		if r.quiet() {
			if owedOnly = r.ex.owed(r.ctx, r.admin, r.e.Namespace); owedOnly == "" {
				return settling{} // quiet, with nothing its objects show it owes
			}
			wait = 200 * time.Millisecond // its objects are read again, not hammered
		}
		writes := r.led.count() - before
		if time.Now().After(deadline) && owedOnly != "" && writes <= 200 {
			// Quiet at times, but for work it owes and does not finish (a finalizer
			// that never ends, a retry for ever): settled as it is, for the oracles to
			// judge what it left. Never settled is for an operator never quiet.
			r.t.Logf("after step %d the operator owed work it did not finish: %s", step+1, owedOnly)
			return settling{}
		}
		if time.Now().After(deadline) || writes > 200 {
			ref, known := r.ex.paces[step]
			return settling{gaveUp: true, writes: writes, outOfTime: outOfTime(step, writes, ref, known, limit)}
		}
		time.Sleep(wait)
	}
}

// restartIfKilled starts a fresh operator if the perturbation killed this one, and
// reports whether it did: the perturbation is spent, and the new operator runs free.
func (r *run) restartIfKilled() bool {
	select {
	case <-r.inc.killed:
		r.inc.stop()
		r.start(perturbation{})
		return true
	default:
		return false
	}
}

// quiet reports whether the operator has done what it was expected to and been quiet
// for long enough; its objects may still show work it owes.
func (r *run) quiet() bool {
	return reconciles() >= r.expected && r.led.events() >= r.awaited && r.reacted() &&
		r.led.idleFor() >= r.ex.x.Quiet && r.led.writeIdleFor() >= childDelay && r.inc.settled()
}

// judge has the oracles of moment at judge e, of this run, and records what they found
// and what they could not judge.
func (r *run) judge(at moment, e *evidence) {
	e.got = r.res
	vs, us := r.ex.judgeAt(at, e)
	r.res.findings = append(r.res.findings, vs...)
	r.res.unjudged = append(r.res.unjudged, us...)
}

// judgeSettled has the oracles judge what the operator did until it settled after step
// (atSettled).
func (r *run) judgeSettled(step int) {
	r.judge(atSettled, &evidence{step: step, claims: r.inc.claims(r.ctx)})
}

// expect says what the operator must do for step s to be settled: reconcile one of its
// objects that s changes, once the event of the change has reached it.
func (r *run) expect(s Step) {
	r.expected = reconciles()
	if s.object == nil || r.ex.ours[kindOf(s.object)] {
		r.expected++ // a change of one of its objects is reconciled
		r.awaited, r.since = r.led.events()+1, time.Now()
	}
}

// expectIfChanged expects a reconcile of object if its generation is no longer
// generation, once events+1 events have reached the operator: a change the API server
// took for none is not reconciled.
func (r *run) expectIfChanged(object string, generation int64, events int) {
	if r.ex.generation(r.ctx, r.admin, r.e.Namespace, object) != generation {
		r.expected++
		r.awaited, r.since = events+1, time.Now()
	}
}

// step makes step i of the workload, s, and what comes after it in a run of this class:
// the operator settled and judged, then, as the run's perturbation asks, the reference
// run's snapshot and restart, the spec transition and its return, the restart against a
// lagging view.
func (r *run) step(i int, s Step) next {
	res := r.res
	r.led.setStep(i)
	r.expect(s)
	var known map[string]bool
	if res.p.class == Stale && res.p.n == i+1 {
		known = r.ex.names(r.t, r.ctx, r.admin, r.e.Namespace, res.p.res)
	}
	if !r.do(i, s) {
		return abandon
	}
	r.settle(i)
	r.judgeSettled(i)
	r.yield()
	if res.p.class == "" && res.unsettled() {
		return stopSteps // the finding: the rest of the workload would not settle either
	}
	if res.outOfTime {
		return stopSteps // judged by no oracle: the rest is not worth the time
	}
	if res.p.class == "" {
		r.snapshot()
	}
	if tr := res.p.tr; tr != nil && tr.step == i {
		r.transition(i, *tr)
	}
	if known != nil {
		r.restartLagging(i, known)
	}
	if atPoint(res.p) && i < len(r.ex.x.Workload)-1 {
		// The state the step settled in, once the collector has done its part: the
		// last step's is the end state.
		res.settledAt[i] = r.collected()
	}
	if res.p.class == "" {
		r.restartConverged(i)
		if res.unsettled() {
			return stopSteps
		}
	}
	return nextStep
}

// do makes step i, s, and reports whether it could: a step that fails while shrinking
// (it needs a step left out) leaves no sequence to try; otherwise it fails the run.
func (r *run) do(i int, s Step) bool {
	if err := s.Do(r.ctx, r.e.Client, r.e.Namespace); err != nil {
		if r.res.p.drop != nil {
			r.res.broken = fmt.Errorf("step %d, %s: %w", i+1, s.Name, err)
			r.inc.stop()
			return false
		}
		r.t.Fatalf("explore: step %d, %s: %v", i+1, s.Name, err)
	}
	for _, d := range s.deletes {
		r.res.deleted[d] = true
	}
	return true
}

// fromScratch makes step i, s, with the run's transition already made to the object it
// creates, and keeps the object and its children once the operator has settled on it:
// what a spec run is compared with (atScratch).
func (r *run) fromScratch(i int, s Step) {
	tr := *r.res.p.tr
	r.led.setStep(i)
	r.expect(s)
	if err := createChanged(r.ctx, r.e.Client, r.e.Namespace, s.object, tr); err != nil {
		r.t.Fatalf("explore: %s from scratch: %v", tr.describe(), err)
	}
	r.settle(i)
	r.res.family = r.steadyFamily(tr.object, true)
	r.inc.stop()
}

// snapshot keeps, in a reference run, the objects once the step has settled and the
// operator's view of them (its watched resources), and learns from the first reference
// run where the object's spec fields go (mapping).
func (r *run) snapshot() {
	objs := r.collected()
	if r.res.name == "reference" {
		r.ex.mapping.learn(normalise(objs, r.e.Namespace, r.ex.ours), managed(objs))
	}
	r.res.snapshots = append(r.res.snapshots, objs)
	r.view()
}

// view keeps what the operator's watched resources hold now (result.views).
func (r *run) view() {
	r.res.views = append(r.res.views, r.ex.view(r.t, r.ctx, r.admin, r.e.Namespace, r.watched))
}

// transition makes the spec transition tr once step i has settled: the transition,
// settled and judged, then the spec before it, settled and compared with the state
// before it.
func (r *run) transition(i int, tr transition) {
	before := r.steadyFamily(tr.object, false)
	spec := r.transit(i, tr)
	r.restore(i, tr, spec, before)
	r.led.setPhase("")
}

// transit applies tr, waits for the operator to settle, and has the oracles judge the
// object (atTransition); it returns the spec before tr. The reconciles of an invalid
// spec are counted with the world held alone.
func (r *run) transit(i int, tr transition) map[string]any {
	if tr.invalid {
		r.exclusive(true) // its reconciles are counted
	}
	start := reconciles()
	events := r.led.events()
	generation := r.ex.generation(r.ctx, r.admin, r.e.Namespace, tr.object)
	r.led.setPhase("transition")
	spec, err := r.ex.apply(r.ctx, r.admin, r.e.Namespace, tr)
	if err != nil {
		r.t.Fatalf("explore: %s: %v", tr.describe(), err)
	}
	r.expected = start
	r.expectIfChanged(tr.object, generation, events)
	r.settle(i)
	r.judgeSettled(i)
	e := &evidence{step: i, tr: &tr, reconciled: int(reconciles() - start)}
	e.object, e.objectErr = r.ex.objectOf(r.ctx, r.admin, r.e.Namespace, tr.object)
	if e.objectErr == nil && !tr.invalid {
		e.family, e.familyErr = r.ex.family(r.ctx, r.admin, r.e.Namespace, tr.object, false)
	}
	r.judge(atTransition, e)
	if !tr.past {
		r.res.transitioned = r.steadyFamily(tr.object, true)
		if o, err := r.ex.objectOf(r.ctx, r.admin, r.e.Namespace, tr.object); err == nil {
			if s, err := kstatus.Compute(o); err == nil {
				r.res.verdict = s.Status
			}
		}
	}
	if tr.invalid {
		r.exclusive(false)
	}
	return spec
}

// restore writes spec, the spec before tr, back, waits for the operator to settle, and
// has the oracles compare the object and its children with before (atReturn).
func (r *run) restore(i int, tr transition, spec map[string]any, before state) {
	r.expected = reconciles()
	generation, events := r.ex.generation(r.ctx, r.admin, r.e.Namespace, tr.object), r.led.events()
	r.led.setPhase("restore")
	if err := r.ex.restore(r.ctx, r.admin, r.e.Namespace, tr.object, spec); err != nil {
		r.t.Fatalf("explore: restoring the spec of %s: %v", tr.object, err)
	}
	r.expectIfChanged(tr.object, generation, events)
	r.settle(i)
	r.judgeSettled(i)
	r.judge(atReturn, &evidence{step: i, tr: &tr, before: before, after: r.steadyFamily(tr.object, false)})
}

// restartLagging starts a new operator, whose view of the resource of the run's Stale
// point lags by step i (known are the objects it holds), and waits for it to settle.
func (r *run) restartLagging(i int, known map[string]bool) {
	r.inc.stop()
	p := r.res.p
	p.known = known
	r.expected = reconciles()
	r.start(p)
	r.settle(i)
	r.judgeSettled(i)
}

// restartConverged proves, in the reference run, convergence after step i: a fresh
// operator, reconciling every object again, writes nothing (atRestart). Its writes are
// news, not a fault, when someone else changed the objects since the operator went quiet
// (the Job controller completing a Job some seconds after the operator made it, on a
// simulated cluster): the proof is then made again with another fresh operator, up to
// restartTries times, and the oracle judges the last.
func (r *run) restartConverged(i int) {
	for try := 1; ; try++ {
		versions := r.versions()
		r.inc.stop()
		before := r.led.count()
		r.start(perturbation{})
		r.settle(i)
		restarted := r.led.snapshot()[before:]
		moved := movedByOthers(versions, r.versions(), restarted)
		if len(restarted) == 0 || len(moved) == 0 || try == restartTries {
			r.judge(atRestart, &evidence{step: i, restarted: restarted, moved: moved})
			return
		}
		r.t.Logf("after step %d a restarted operator wrote %d times after others changed %s: proved again", i+1, len(restarted), strings.Join(moved, ", "))
	}
}

// restartTries bounds the proofs of convergence after a step: a world that others still
// change after three of them leaves the proof unjudged.
const restartTries = 3

// versions are the resource versions of the objects of the run, by key.
func (r *run) versions() map[string]string {
	objs, err := objectsOf(r.ctx, r.admin, r.e.Namespace, r.ex.kinds)
	if err != nil {
		r.t.Fatalf("explore: %v", err)
	}
	out := make(map[string]string, len(objs))
	for k, o := range objs {
		out[k] = o.GetResourceVersion()
	}
	return out
}

// movedByOthers are the keys of the objects that changed, appeared or went from before to
// after other than by the operator's writes: an object whose version is not one an answer
// to them carried, or gone with no delete of its name among them.
func movedByOthers(before, after map[string]string, writes []write) []string {
	ours := map[string]bool{}
	deleted := map[string]bool{}
	for _, w := range writes {
		if meta, ok := w.Object["metadata"].(map[string]any); ok {
			if v, ok := meta["resourceVersion"].(string); ok {
				ours[v] = true
			}
		}
		if w.Verb == "delete" {
			deleted[w.Name] = true
		}
	}
	var moved []string
	for k, v := range after {
		if before[k] != v && !ours[v] {
			moved = append(moved, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok && !deleted[k[strings.Index(k, " ")+1:]] {
			moved = append(moved, k)
		}
	}
	slices.Sort(moved)
	return moved
}

// end stops the operator and keeps what the run did and left: its writes, the resources
// it watched, and the objects once the garbage collector has done its part.
func (r *run) end() {
	res := r.res
	r.inc.stop()
	res.writes = r.led.snapshot()
	r.watched.Range(func(k, _ any) bool { res.watched = append(res.watched, k.(string)); return true })
	slices.Sort(res.watched)
	objs := r.collected()
	res.objects = objs
	res.end = r.ex.normalise(objs, r.e.Namespace)
}

// collected are the objects of the run's namespace once the garbage collector has done
// its part (explorer.collected).
func (r *run) collected() map[string]*unstructured.Unstructured {
	objs, err := r.ex.collected(r.ctx, r.admin, r.e.Namespace)
	if err != nil {
		r.t.Fatalf("explore: %v", err)
	}
	return objs
}

// steadyFamily is the object and its children once settled (explorer.steadyFamily).
func (r *run) steadyFamily(object string, written bool) state {
	fam, err := r.ex.steadyFamily(r.ctx, r.admin, r.e.Namespace, object, written)
	if err != nil {
		r.t.Fatalf("explore: %v", err)
	}
	return fam
}
