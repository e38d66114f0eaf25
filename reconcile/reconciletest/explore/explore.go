package explore

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/webhook"
)

var (
	all        = flag.Bool("explore.all", false, "explore every point of every class, whatever an Exploration's Budget")
	budgetFlag = flag.Int("explore.budget", 0, "the most perturbed runs of each exploration, whatever its Budget; 0 keeps its own")
	parallel   = flag.Int("explore.parallel", 0, "the most perturbed runs of each exploration made at once, whatever its Parallel; 0 keeps its own")
)

var classesFlag = flag.String("explore.classes", "", "explore only these classes (crash,fail,lost,stale,unobserved,spec), of those each Exploration has")

var replay = flag.String("explore.replay", "", "run only the reference run and the exploration run of this name (crash@7, fail@3, stale@apps/deployments@write3, ...), as a failure's report says")

// Class is a kind of perturbation.
type Class string

// The classes of perturbation, each with the points it is applied at.
const (
	// Crash kills the operator right after its nth accepted write (in-process: its
	// manager is cut off from the API server at once, then stopped) and starts a fresh
	// one: the intermediate state that write left is all the new one starts from. A
	// point for each accepted write of the reference run.
	Crash Class = "crash"
	// Fail answers the operator's nth write with 500 Internal Server Error instead of
	// sending it: the error path of each write. A point for each write of the reference
	// run.
	Fail Class = "fail"
	// Lost sends the operator's nth write to the API server, which applies it, and then
	// loses the answer: the operator sees 504 Gateway Timeout for a write that was made.
	// A point for each write of the reference run.
	Lost Class = "lost"
	// Stale has the operator read one resource through a cache that lags, at two kinds
	// of read (stale.go). At a read after its own write: from its nth write on (the
	// write's number as for Fail), the watch events of the written resource are held
	// back for a while, so that every read of it through the cache meanwhile sees the
	// view before the write, and the reconciles those events ask for come late; a point
	// for each write of the reference run accepted on a resource the operator watches.
	// At its list: once a step has settled, the operator restarts, and the objects of
	// one resource the step created stay hidden from the new operator's list (and its
	// watch) for a while, as from an API server whose watch cache lags etcd, while the
	// other resources are current; a point for each resource the operator watches and
	// each step that created objects of it in the reference run.
	Stale Class = "stale"
	// Unobserved coalesces the watch events of one resource: of a series of changes of
	// one object, the operator sees only the first and the last. A point for each
	// resource the operator watches.
	Unobserved Class = "unobserved"
	// Spec changes the spec of one of the workload's objects of the operator's kinds once
	// the step that creates it has settled, and then writes its spec back: a transition
	// generated from the schema of its CRD (a bound, a random value between the bounds,
	// an enum's other values, a boolean's other value, a field's removal), or, written to
	// etcd past the schema, a value the schema refuses (just outside a bound, outside an
	// enum, a required field removed). A point for each transition of each object; the
	// random values are the seed's (-explore.seed).
	Spec Class = "spec"
)

// scratch is the class of a run that creates, after the steps before it, an object of
// the workload with a spec transition already made, and stops once the operator has
// settled on it: the state a spec run is compared with (reached).
const scratch Class = "scratch"

// Classes are every class of perturbation, in the order they are explored.
var Classes = []Class{Crash, Fail, Lost, Stale, Unobserved, Spec}

// Exploration describes what to explore: an operator, started (reconciletest.Operator's
// Main in a TestMain, on a control plane its tests share), and a workload.
type Exploration struct {
	// Operator is the operator under test. Each run takes an Env of it, a namespace of
	// its own, and runs the operator there as its role alone empowers it.
	Operator *reconciletest.Operator

	// Namespaces are the namespaces the operator's cache watches beside the run's, as
	// reconciletest.Env.Namespaces: with Namespace for the run's in a name
	// ("tenant-{namespace}"), or reconciletest.AllNamespaces for every one. An operator
	// that works in a namespace not among them fails the run at once, naming this field
	// of Env's. The oracles judge the objects of the run's namespace and cluster-scoped
	// ones.
	Namespaces []string

	// Workload are the steps each run makes, in order, each once the operator has
	// settled after the one before. It should end by deleting what it created, so that
	// "nothing left behind" is checked.
	Workload []Step

	// Classes are the perturbations to explore; nil means every one (Classes).
	Classes []Class

	// Budget is the most perturbed runs to make, spread over the classes' points; zero
	// means every point of every class. A short pass in a package's usual tests sets it.
	Budget int

	// Mutant names the bug of a deliberately buggy operator, explored to prove that the
	// oracles catch it: its violations count as caught in Summary, not as violations.
	Mutant string

	// StopAtFirst ends a mutant's exploration at the first run one of its CaughtBy
	// oracles faults: its being caught at all is the point. A violation of another oracle
	// does not stop it, so that an unrelated alarm cannot hide the bug under test. Without
	// a Mutant, the first run any oracle faults ends it.
	StopAtFirst bool

	// Quiet is how long the operator must send nothing, with no reconcile queued or
	// running, to count as settled; zero means 300ms.
	Quiet time.Duration

	// Masks are fields, of objects of the operator's kinds or of its children's, that
	// may differ from one run to the next without a violation, besides those the API
	// server assigns and those the exploration learns by making its reference run
	// twice: a field the operator fills from a clock or at random that two reference
	// runs happen to agree on, say. The report lists them with the rest.
	Masks []Mask

	// MaxPoints is the most points of each class explored; a class that offers more is
	// explored at a sample of them, drawn from -explore.seed. Zero means
	// DefaultMaxPoints; -explore.all explores every point up to it.
	MaxPoints int

	// CaughtBy are the oracles that must catch the Mutant: it counts as caught only when
	// one of them reports it, and a violation of any other oracle in its exploration is
	// a false alarm (Summary). A Mutant needs one at least, each of Oracles: Explore
	// refuses a Mutant without CaughtBy, and a name that is no oracle's.
	CaughtBy []Oracle

	// Parallel is the most perturbed runs made at once, each in its namespace with an
	// operator of its own; zero means DefaultParallel. A run mostly waits for its
	// operator to settle, so runs at once take less time than one after another, even
	// on two cores. The reference run is made alone, first. An operator that declares
	// a conversion webhook has its runs take turns whatever Parallel says: a CRD has one
	// conversion webhook (reconciletest.Env.Run).
	Parallel int
}

// DefaultParallel is the perturbed runs an exploration makes at once unless its Parallel
// or -explore.parallel says otherwise.
const DefaultParallel = 4

// DefaultMaxPoints is the most points of one class an exploration explores unless its
// MaxPoints says otherwise: an operator that writes on every reconcile would offer a
// crash point for each of its thousands of writes.
const DefaultMaxPoints = 24

// Violation is an oracle's finding in one run.
type Violation struct {
	// Run names the run: its class and point, "crash@7", or "reference".
	Run string
	// Class is the run's class of perturbation; "" for the reference run.
	Class Class
	// Oracle is the oracle that found it, one of Oracles.
	Oracle Oracle
	// Detail says what was found.
	Detail string
}

// String is the violation as a report lists it: "crash@7 [created twice]: write 9
// created ...", its run, its oracle and what it found.
func (v Violation) String() string {
	return fmt.Sprintf("%s [%s]: %s", v.Run, v.Oracle, v.Detail)
}

// Report is what an exploration did and found.
type Report struct {
	// Runs counts the runs made, the reference included; Points the perturbation points
	// the classes offered.
	Runs, Points int
	// Violations are the oracles' findings.
	Violations []Violation
	// Details are the reports of the runs with violations: the replay command and the
	// writes of the reference run and of the run side by side.
	Details []string
	// Duration is how long the exploration took.
	Duration time.Duration
	// Masks are what the states of two runs were compared without: the API server's,
	// the author's (Exploration.Masks), and those learnt from the reference runs, each
	// with why.
	Masks []Mask
	// Sampled are the classes explored at a sample of their points, each with the
	// points kept and offered ("crash: 24 of 2656").
	Sampled []string
	// Unsettled says the reference run did not settle: that is the finding, and no
	// perturbed run was made.
	Unsettled bool
	// FalseAlarms are the violations of a mutant's exploration by an oracle other than
	// its CaughtBy.
	FalseAlarms []Violation
	// Unjudged are the transitions and points an oracle could not judge, each with why
	// (a run that never settled, an object its operator reports Stalled): what the
	// exploration did not prove, said rather than skipped. Summary counts them.
	Unjudged []Unjudged
}

// Unjudged is a transition or point of a run that an oracle could not judge.
type Unjudged struct {
	// Run names the run, as Violation.Run does.
	Run string
	// Oracle is the oracle that could not judge it.
	Oracle Oracle
	// Why says why it could not.
	Why string
	// reason is Why in short, without the names of the object and the transition: what
	// Summary counts alike.
	reason string
}

// String is the unjudged point as a report lists it: "spec@shop@-tier [spec not
// reached] unjudged: after ..., the operator never settled".
func (u Unjudged) String() string {
	return fmt.Sprintf("%s [%s] unjudged: %s", u.Run, u.Oracle, u.Why)
}

// Caught reports whether a violation was found in a run of class by oracle; "" matches
// any.
func (r *Report) Caught(class Class, oracle Oracle) bool {
	for _, v := range r.Violations {
		if (class == "" || v.Class == class) && (oracle == "" || v.Oracle == oracle) {
			return true
		}
	}
	return false
}

// stopsAt reports whether v ends an exploration that StopAtFirst: a violation of one of
// the mutant's CaughtBy oracles, or of any oracle in an exploration without a mutant.
func (x Exploration) stopsAt(v Violation) bool {
	return len(x.CaughtBy) == 0 || slices.Contains(x.CaughtBy, v.Oracle)
}

// caught reports whether one of the oracles found a violation.
func (r *Report) caught(oracles []Oracle) bool {
	return slices.ContainsFunc(r.Violations, func(v Violation) bool { return slices.Contains(oracles, v.Oracle) })
}

// Run explores x and fails t with the report of each run that an oracle faults.
func Run(t *testing.T, x Exploration) *Report {
	t.Helper()
	r := Explore(t, x)
	for _, d := range r.Details {
		t.Error(d)
	}
	return r
}

// Explore explores x and returns what it found, failing t only if the exploration cannot
// be made (the workload fails, the control plane is gone): for a test that expects
// violations, such as one proving the oracles catch a buggy operator.
// Under go test -short it skips t, as an exploration needs a control plane.
func Explore(t *testing.T, x Exploration) *Report {
	t.Helper()
	reconciletest.SkipShort(t) // under -short, which runs the tests that need no control plane
	start := time.Now()
	if err := x.validate(); err != nil {
		t.Fatal(err)
	}
	if x.Quiet == 0 {
		x.Quiet = 300 * time.Millisecond
	}
	if x.Classes == nil {
		x.Classes = Classes
	}
	if *classesFlag != "" {
		x.Classes = slices.DeleteFunc(slices.Clone(x.Classes), func(c Class) bool {
			return !slices.Contains(strings.Split(*classesFlag, ","), string(c))
		})
	}
	ex := &explorer{t: t, x: x, mapping: mapping{}}
	ex.prepare()
	rep := &Report{}
	ref := ex.reference(t, rep)
	if ref.unsettled() {
		// An operator that does not settle unperturbed: every perturbed run would too,
		// and its writes would make points without end.
		rep.Unsettled = true
		ex.finish(rep, start)
		return rep
	}

	maxPoints := x.MaxPoints
	if maxPoints <= 0 {
		maxPoints = DefaultMaxPoints
	}
	var points []perturbation
	for _, c := range x.Classes {
		ps := ex.points(c, ref)
		rep.Points += len(ps)
		if len(ps) > maxPoints {
			rep.Sampled = append(rep.Sampled, fmt.Sprintf("%s: %d of %d", c, maxPoints, len(ps)))
			ps = sample(ps, maxPoints, x.Operator.User+"/"+string(c))
		}
		points = append(points, ps...)
	}
	if *budgetFlag > 0 {
		x.Budget = *budgetFlag
	}
	if !*all && *replay == "" {
		points = budget(points, x.Budget)
	}
	if *replay != "" {
		points = slices.DeleteFunc(points, func(p perturbation) bool { return p.name() != *replay })
	}
	for _, d := range ex.perturbed(t, points, ref) {
		rep.Runs += d.runs
		if x.StopAtFirst && slices.ContainsFunc(rep.Violations, x.stopsAt) {
			continue // made at once with the one that caught it; judged no further
		}
		ex.record(rep, d.got, ref, d.violations)
		ex.unjudged(rep, d.got)
		if d.shrunk != "" && len(rep.Details) > 0 {
			rep.Details[len(rep.Details)-1] += d.shrunk
		}
	}
	ex.finish(rep, start)
	return rep
}

// finish sorts out a mutant's false alarms, adds rep to the tally and logs it.
func (ex *explorer) finish(rep *Report, start time.Time) {
	x := ex.x
	rep.Duration = time.Since(start)
	if x.Mutant != "" {
		for _, v := range rep.Violations {
			if !slices.Contains(x.CaughtBy, v.Oracle) {
				rep.FalseAlarms = append(rep.FalseAlarms, v)
			}
		}
	}
	tally.add(rep, x.Mutant != "", x.CaughtBy)
	ex.t.Logf("explore %s: runs=%d points=%d violations=%d unjudged=%d in %s", x.Operator.User, rep.Runs, rep.Points, len(rep.Violations), len(rep.Unjudged), rep.Duration.Round(time.Millisecond))
	for _, m := range rep.Masks {
		if m.Why != whyServer { // the API server's are the same for every exploration
			ex.t.Logf("explore %s: masked: %s", x.Operator.User, m)
		}
	}
	for _, s := range rep.Sampled {
		ex.t.Logf("explore %s: sampled %s points", x.Operator.User, s)
	}
}

// reference makes the reference run twice, each with a fresh operator in a namespace of
// its own, at once: what differs between the two (an object, a field) is the operator's
// own nondeterminism, masked for the rest of the exploration, with what the API server
// assigns and the author's masks. The first is the reference, judged; the second is
// made to learn from alone.
func (ex *explorer) reference(t *testing.T, rep *Report) *result {
	var again *result
	var wg sync.WaitGroup
	wg.Go(func() { again = ex.run(t, "reference-again", perturbation{}) })
	ref := ex.run(t, "reference", perturbation{})
	wg.Wait()
	rep.Runs += 2
	ex.paces = slowerPaces(ref.paces, again.paces)
	learned := learnMasks(ex.states(ref), ex.states(again))
	ex.masks = append(ex.masks, learned...)
	rep.Masks = slices.Clone(ex.masks)
	// Their end states were normalised before the masks were learnt.
	ref.end = ex.normalise(ref.objects, ref.namespace)
	ex.judge(rep, ref, nil)
	ex.unjudged(rep, ref)
	return ref
}

// unjudged adds what the oracles could not judge in the run got to rep, and logs it.
func (ex *explorer) unjudged(rep *Report, got *result) {
	for _, u := range got.unjudged {
		u.Run = got.name
		rep.Unjudged = append(rep.Unjudged, u)
		ex.t.Logf("explore %s: %s", ex.x.Operator.User, u)
	}
}

// states are the states the reference run res settled in, after each step and at its
// end, normalised and masked as the exploration knows so far.
func (ex *explorer) states(res *result) []state {
	var out []state
	for _, objs := range append(slices.Clone(res.snapshots), res.objects) {
		out = append(out, ex.normalise(objs, res.namespace))
	}
	return out
}

// normalise is the state of objs, normalised (state.go) and masked by the masks the
// exploration knows.
func (ex *explorer) normalise(objs map[string]*unstructured.Unstructured, namespace string) state {
	s := normalise(objs, namespace, ex.ours)
	mask(s, ex.masks)
	return s
}

// done is one perturbed run made, with what the oracles found and, for a spec
// transition they faulted, its minimal failing step sequence.
type done struct {
	got        *result
	violations []Violation
	shrunk     string
	runs       int // the runs made for it, those of the shrinking included
}

// perturbed makes a run of each point, up to Parallel at once, and returns them in the
// order of points, whatever order they ended in: the report is the same at any
// Parallel. With StopAtFirst, no run is started once one has a violation of one of the
// mutant's CaughtBy oracles; those started before it end, and are counted, but are not
// judged.
func (ex *explorer) perturbed(t *testing.T, points []perturbation, ref *result) []done {
	n := ex.x.Parallel
	if *parallel > 0 {
		n = *parallel
	}
	if n <= 0 {
		n = DefaultParallel
	}
	if ex.converts {
		n = 1
	}
	out := make([]done, len(points))
	slots := make(chan struct{}, n)
	var wg sync.WaitGroup
	var faulted sync.Once
	stop := make(chan struct{})
	for i, p := range points {
		slots <- struct{}{}
		if ex.x.StopAtFirst && closed(stop) {
			<-slots
			out = out[:i]
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			// A valid transition's run is compared with a fresh operator's from scratch,
			// made at once.
			var fresh *result
			var both sync.WaitGroup
			runs := 1
			if p.class == Spec && !p.tr.past {
				runs++
				both.Go(func() {
					fresh = ex.run(t, perturbation{class: scratch, tr: p.tr}.name(), perturbation{class: scratch, tr: p.tr})
				})
			}
			got := ex.run(t, p.name(), p)
			both.Wait()
			if got.outOfTime {
				out[i] = done{got: got, runs: runs} // unjudged, and counted so
				return
			}
			var shrunk string
			if p.class == Spec && len(got.findings) > 0 {
				// Shrunk by the oracles of the spec run itself: a run without a step has
				// no run from scratch to compare with.
				var n int
				shrunk, n = ex.shrink(t, p, got)
				runs += n
			}
			if p.class == Spec {
				vs, us := ex.judgeAt(atScratch, &evidence{got: got, tr: p.tr, fresh: fresh})
				got.findings = append(got.findings, vs...)
				got.unjudged = append(got.unjudged, us...)
			}
			d := done{got: got, violations: ex.violations(got, ref), runs: runs, shrunk: shrunk}
			out[i] = d
			if ex.x.StopAtFirst && slices.ContainsFunc(d.violations, ex.x.stopsAt) {
				faulted.Do(func() { close(stop) })
			}
		}()
	}
	wg.Wait()
	return out
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// budget keeps n points spread evenly over points, every class's first among them.
func budget(points []perturbation, n int) []perturbation {
	if n <= 0 || n >= len(points) {
		return points
	}
	keep := map[int]bool{}
	seen := map[Class]bool{}
	for i, p := range points {
		if !seen[p.class] && len(keep) < n {
			seen[p.class] = true
			keep[i] = true
		}
	}
	for i := 0; len(keep) < n && i < len(points); i += max(1, len(points)/n) {
		keep[i] = true
	}
	var kept []perturbation
	for i, p := range points {
		if keep[i] {
			kept = append(kept, p)
		}
	}
	return kept
}

// perturbation is one run's perturbation: a class and its point.
type perturbation struct {
	class Class
	n     int             // Crash, Fail, Lost: the write; Stale at a list: the step
	write int             // Stale at a read: the write from which the cache of res lags
	res   string          // Stale, Unobserved: the resource watched
	known map[string]bool // Stale: the objects of res the lagging view holds, by namespace/name
	tr    *transition     // Spec: the transition
	drop  map[int]bool    // Spec, while shrinking: the workload's steps left out, by index
}

func (p perturbation) name() string {
	switch p.class {
	case "":
		return "reference"
	case Crash, Fail, Lost:
		return fmt.Sprintf("%s@%d", p.class, p.n)
	case Stale:
		if p.write > 0 {
			return fmt.Sprintf("%s@%s@write%d", p.class, p.res, p.write)
		}
		return fmt.Sprintf("%s@%s@step%d", p.class, p.res, p.n)
	case Spec, scratch:
		_, name, _ := strings.Cut(p.tr.object, " ")
		return fmt.Sprintf("%s@%s@%s", p.class, name, p.tr.name())
	}
	return fmt.Sprintf("%s@%s", p.class, p.res)
}

// points are the points of class c given the reference run.
func (ex *explorer) points(c Class, ref *result) []perturbation {
	var ps []perturbation
	switch c {
	case Crash:
		n := 0
		for _, w := range ref.writes {
			if w.accepted() {
				n++
				ps = append(ps, perturbation{class: c, n: n})
			}
		}
	case Fail, Lost:
		for i := range ref.writes {
			ps = append(ps, perturbation{class: c, n: i + 1})
		}
	case Stale:
		ps = stalePoints(ref, len(ex.x.Workload))
	case Unobserved:
		for _, res := range ref.watched {
			ps = append(ps, perturbation{class: c, res: res})
		}
	case Spec:
		for _, tr := range ex.transitions() {
			ps = append(ps, perturbation{class: c, tr: &tr})
		}
	}
	return ps
}

// explorer explores one Exploration.
type explorer struct {
	t     *testing.T
	x     Exploration
	kinds []schema.GroupVersionKind // the kinds whose objects make a state
	ours  map[string]bool           // the kinds the operator reconciles
	owned map[string]bool           // the kinds of its children
	// foreign are the group/resource and name of the objects the workload creates that
	// the operator does not reconcile: someone else's.
	foreign map[string]bool
	// mapping is where the reference run showed the operator puts each field of its
	// objects' specs.
	mapping mapping
	// converts says the operator declares a conversion webhook: its runs are made one
	// at a time.
	converts bool
	// clusterScoped are the operator's kinds that are cluster-scoped, by group/resource.
	clusterScoped map[string]bool
	// observes are the operator's kinds whose status has an observedGeneration
	// (reconcile.ObservedGenerationSetter): their objects show whether it has
	// reconciled their generation (owed).
	observes map[string]bool
	// masks are the fields the states of two runs are compared without (Mask): the API
	// server's and the author's, then those learnt from the reference runs. Set before
	// the perturbed runs begin, and only read by them.
	masks []Mask
	// paces are, by step, the slower of the two reference runs' (settleLimit); set with
	// masks.
	paces map[int]pace
}

func (ex *explorer) prepare() {
	t := ex.t
	o := ex.x.Operator
	if o == nil || o.ControlPlane == nil || o.Scheme == nil {
		t.Fatal("explore: the operator has not been started: run its tests' TestMain with reconciletest.Operator.Main")
	}
	if len(ex.x.Workload) == 0 {
		t.Fatal("explore: the workload has no step")
	}
	c := ex.admin(t)
	ex.masks = append(slices.Clone(ruleMasks), ex.x.Masks...)
	for _, m := range ex.x.Masks {
		if err := m.validate(); err != nil {
			t.Fatal(err)
		}
	}
	ex.ours = map[string]bool{}
	ex.owned = map[string]bool{}
	ex.foreign = map[string]bool{}
	add := func(obj client.Object) schema.GroupVersionKind {
		gvk, err := apiutil.GVKForObject(obj, o.Scheme)
		if err != nil {
			t.Fatalf("explore: %v", err)
		}
		if !slices.Contains(ex.kinds, gvk) {
			ex.kinds = append(ex.kinds, gvk)
		}
		return gvk
	}
	endpoints, err := reconcile.Manager{Options: ctrl.Options{Scheme: o.Scheme}, Controllers: o.Controllers}.Webhooks()
	if err != nil {
		t.Fatalf("explore: %v", err)
	}
	for _, ep := range endpoints {
		// The runs of an operator that converts its CRDs take turns for the conversion
		// webhook (reconciletest.Env.Run) from their first start to their end: made at
		// once, a run would wait for another while holding the world that one may
		// need alone.
		ex.converts = ex.converts || ep.Type == webhook.Converting
	}
	ex.clusterScoped = map[string]bool{}
	ex.observes = map[string]bool{}
	for _, d := range o.Controllers {
		gvk := add(d.Object())
		ex.ours[gvk.Kind] = true
		_, ex.observes[gvk.Kind] = d.Object().(reconcile.ObservedGenerationSetter)
		m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("explore: %v", err)
		}
		if m.Scope.Name() == meta.RESTScopeNameRoot {
			ex.clusterScoped[m.Resource.Group+"/"+m.Resource.Resource] = true
		}
		for _, child := range d.Children() {
			ex.owned[add(child).Kind] = true
		}
	}
	for _, s := range ex.x.Workload {
		if s.object == nil {
			continue
		}
		gvk := add(s.object)
		if ex.ours[gvk.Kind] {
			continue
		}
		m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("explore: %v", err)
		}
		ex.foreign[m.Resource.Group+"/"+m.Resource.Resource+"/"+s.object.GetName()] = true
	}
}

func (ex *explorer) admin(t testing.TB) client.Client {
	c, err := client.New(ex.x.Operator.ControlPlane.Config, client.Options{Scheme: ex.x.Operator.Scheme})
	if err != nil {
		t.Fatalf("explore: %v", err)
	}
	return c
}

// result is what one run did and left.
type result struct {
	name      string
	p         perturbation
	namespace string
	writes    []write
	watched   []string // the resources the operator watched, group/resource
	end       state
	objects   map[string]*unstructured.Unstructured
	findings  []Violation
	unjudged  []Unjudged // what an oracle could not judge in the run, and why
	// paces are how long the operator took to settle after each step (-1: its start),
	// and what it wrote meanwhile.
	paces map[int]pace
	// outOfTime says the run was cut short, the operator not quiet within the settle
	// limit while it wrote no more than the reference run did (outOfTime): no oracle
	// judges it.
	outOfTime bool
	deleted   map[string]bool // "Kind name" of the workload's objects it deleted
	// views are, in the reference run, the objects of each resource the operator watched
	// (group/resource → namespace/name) before the first step and after each step: what
	// each step created, for the Stale points at a list.
	views []map[string]map[string]bool
	// snapshots are, in a reference run, the objects of the kinds explored once each
	// step has settled: what two reference runs are compared by to learn masks.
	snapshots []map[string]*unstructured.Unstructured
	// settledAt are, in a run perturbed at a point (crash, fail, lost, stale,
	// unobserved), the objects of the kinds explored once each step but the last has
	// settled, by the step's index: what the end state oracle compares with the
	// reference run's snapshots.
	settledAt map[int]map[string]*unstructured.Unstructured
	broken    error // while shrinking: a step failed without a step left out
	// family is, in a run from scratch (perturbation.scratch), the object and its
	// children once the operator has settled on it.
	family state
	// transitioned is, in a spec run, the object and its children once the operator
	// has settled after the transition; verdict kstatus' reading of the object then.
	transitioned state
	verdict      kstatus.Status
}

// unsettled reports whether the operator did not settle in the run.
func (r *result) unsettled() bool {
	return slices.ContainsFunc(r.findings, func(v Violation) bool { return v.Oracle == NeverSettled })
}

// run makes one run of the workload under p, as a subtest named name.
func (ex *explorer) run(t *testing.T, name string, p perturbation) *result {
	res := &result{name: name, p: p, deleted: map[string]bool{}, paces: map[int]pace{}, settledAt: map[int]map[string]*unstructured.Unstructured{}}
	t.Run(name, func(t *testing.T) {
		ex.runIn(t, res)
		for _, v := range res.findings {
			t.Logf("[%s] %s", v.Oracle, v.Detail)
		}
		if testing.Verbose() {
			t.Logf("writes:\n%s", sideBySide(res.writes, nil))
		}
	})
	return res
}

// collectionWait bounds how long the end state waits for the garbage collector. On a
// simulated cluster the collector deletes the children of an object of a kind only once
// it watches that kind: a CRD installed as the tests start is found by its periodic
// discovery, some 30 s later, and the first explorations' reference runs, made meanwhile,
// ended with the children of their deleted objects still there, unlike every perturbed
// run after them (an "end state" false alarm in each). The bound is past that sync.
const collectionWait = 2 * time.Minute

// collected returns the objects of namespace once the garbage collector has deleted the
// children of the operator's objects the workload deleted, or after collectionWait: when
// it does is up to the controller manager, not the operator, and an end state read
// before would differ from the reference run's by a child about to go. One still there
// after the wait is what the oracles then report.
// An API server alone has no garbage collector: there is nothing to wait for.
func (ex *explorer) collected(ctx context.Context, c client.Client, namespace string) (map[string]*unstructured.Unstructured, error) {
	_, collector := ex.x.Operator.ControlPlane.PIDs()["kube-controller-manager"]
	deadline := time.Now().Add(collectionWait)
	for {
		objs, err := objectsOf(ctx, c, namespace, ex.kinds)
		if err != nil || !collector || time.Now().After(deadline) || !awaitingCollection(objs, ex.ours) {
			return objs, err
		}
		select {
		case <-ctx.Done():
			return objs, nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// awaitingCollection reports whether an object of objs has an owner of one of the kinds
// ours that is no longer among them: deleted, its children left to the garbage collector.
func awaitingCollection(objs map[string]*unstructured.Unstructured, ours map[string]bool) bool {
	present := map[types.UID]bool{}
	for _, o := range objs {
		present[o.GetUID()] = true
	}
	for _, o := range objs {
		for _, ref := range o.GetOwnerReferences() {
			if ours[ref.Kind] && !present[ref.UID] {
				return true
			}
		}
	}
	return false
}

// names returns the namespace/name of every object of resource (group/resource) in
// namespace: what a lagging view of it holds.
func (ex *explorer) names(t testing.TB, ctx context.Context, c client.Client, namespace, resource string) map[string]bool {
	group, res, _ := strings.Cut(resource, "/")
	gvk, err := c.RESTMapper().KindFor(schema.GroupVersionResource{Group: group, Resource: res})
	if err != nil {
		t.Fatalf("explore: %v", err)
	}
	objs, err := objectsOf(ctx, c, namespace, []schema.GroupVersionKind{gvk})
	if err != nil {
		t.Fatalf("explore: %v", err)
	}
	names := map[string]bool{}
	for _, o := range objs {
		names[o.GetNamespace()+"/"+o.GetName()] = true
	}
	return names
}

// owed says what work the objects of the operator's kinds in namespace show it owes,
// "" if none: an object whose status has not observed its generation (the operator
// writes status.observedGeneration once a reconcile of that generation succeeds, or
// fails for good), unless it is paused, or one deleted whose finalizers are still there. It is the state, not
// the time since the operator last did something, that says whether a restarted
// operator has finished what it found, or a retry is to come, however slow the machine.
func (ex *explorer) owed(ctx context.Context, c client.Client, namespace string) string {
	objs, err := objectsOf(ctx, c, namespace, ex.ourKinds())
	if err != nil {
		return err.Error()
	}
	for _, key := range mapsKeys(objs) {
		o := objs[key]
		if o.GetDeletionTimestamp() != nil && len(o.GetFinalizers()) > 0 {
			return fmt.Sprintf("%s is deleted and holds the finalizers %v", key, o.GetFinalizers())
		}
		observed, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
		// A paused object's generation is not reconciled, by contract (reconcile.Paused).
		if ex.observes[o.GetKind()] && o.GetDeletionTimestamp() == nil && observed < o.GetGeneration() && !pausedNow(o) {
			return fmt.Sprintf("%s is at generation %d, its status at %d", key, o.GetGeneration(), observed)
		}
	}
	return ""
}

// pausedNow reports whether o has the condition Paused True.
func pausedNow(o *unstructured.Unstructured) bool {
	return conditionOf(o, reconcile.Paused)["status"] == "True"
}

// childDelay is how long after a write of the operator it may still reconcile because of
// it: the events of the children it writes reach it coalesced, a second late (package
// reconcile's coalesceDelay), and their reconciles wait in its queue meanwhile, where no
// metric shows them.
const childDelay = 1200 * time.Millisecond

// reconciles is how many reconciles every controller of the process has finished.
func reconciles() float64 {
	var n float64
	families, _ := metrics.Registry.Gather()
	for _, f := range families {
		if f.GetName() == "controller_runtime_reconcile_total" {
			for _, m := range f.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// ourKinds are the kinds the operator reconciles.
func (ex *explorer) ourKinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for _, k := range ex.kinds {
		if ex.ours[k.Kind] {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// incarnation is one manager of a run: its hook records its requests and perturbs them.
type incarnation struct {
	n         int
	p         perturbation
	led       *ledger
	admin     client.Client
	ours      map[string]bool
	kinds     []schema.GroupVersionKind
	namespace string
	watched   *sync.Map
	// clusterScoped are the operator's kinds that are cluster-scoped, by group/resource:
	// its lists and watches of them are narrowed to the run's objects (onlyRun).
	clusterScoped map[string]bool
	stop          func()
	normalise     func(map[string]*unstructured.Unstructured, string) state

	mu       sync.Mutex
	accepted int
	sent     int
	dead     bool
	killed   chan struct{}
	current  []currentClaim // Current verdicts written since the last settle
	filters  []*watchFilter
	hidden   []json.RawMessage // Stale: the events of the objects its list hid, for its watch
	lag      *lagWindow        // Stale at a read: when its cache of the resource lags
}

// currentClaim is a status the operator wrote that kstatus reads as Current, with the
// objects its owner controlled then, and those it controls once the operator has settled
// (or err, why they could not be read).
type currentClaim struct {
	write    int
	kind     string
	name     string
	uid      string
	children state
	now      state
	err      error
}

// claims are the Current verdicts written since the last call, each with the children its
// object has now that the operator has settled: what currentTooEarly judges.
func (inc *incarnation) claims(ctx context.Context) []currentClaim {
	inc.mu.Lock()
	claims := inc.current
	inc.current = nil
	inc.mu.Unlock()
	for i, c := range claims {
		claims[i].now, claims[i].err = inc.childrenOf(ctx, c.uid)
	}
	return claims
}

var errKilled = errors.New("explore: the operator was killed")

func (inc *incarnation) hook(r *reconciletest.Request) (*http.Response, error) {
	inc.mu.Lock()
	dead := inc.dead
	inc.mu.Unlock()
	if dead {
		return nil, errKilled
	}
	if (r.Verb == "list" || r.Verb == "watch") && r.Namespace == "" && inc.clusterScoped[groupOf(r)+"/"+r.Resource] {
		inc.onlyRun(r)
	}
	if r.Verb == "watch" {
		return inc.watch(r)
	}
	defer inc.led.begin()()
	// A list with a resourceVersion is a cache's, answered from the API server's watch
	// cache, which may lag; one without is consistent, read from etcd (an APIReader's),
	// and never stale.
	if r.Verb == "list" && inc.p.class == Stale && inc.p.known != nil && groupOf(r)+"/"+r.Resource == inc.p.res && r.HTTP.URL.Query().Get("resourceVersion") != "" {
		return inc.staleList(r)
	}
	if !r.IsWrite() || r.Resource == "events" {
		return r.Send()
	}
	// Answers the exploration reads: JSON, whatever the client asked for.
	r.HTTP.Header.Set("Accept", "application/json")
	w := write{Verb: r.Verb, Resource: r.Resource, Subresource: r.Subresource, Group: groupOf(r), Incarnation: inc.n}
	inc.mu.Lock()
	inc.sent++
	fail := inc.p.class == Fail && inc.sent == inc.p.n
	lose := inc.p.class == Lost && inc.sent == inc.p.n
	if inc.p.class == Stale && inc.sent == inc.p.write {
		// Before the write is sent: its own event is among those held.
		inc.lag.start(time.Now())
	}
	inc.mu.Unlock()
	if fail {
		w.Name, w.Code, w.Injected = inc.named(r, nil), http.StatusInternalServerError, true
		if w.Name == "?" {
			w.Name = "(create)"
		}
		inc.led.add(w)
		return r.Fail(http.StatusInternalServerError, "explore: this write fails on purpose"), nil
	}
	resp, err := r.Send()
	if resp != nil {
		w.Code = resp.StatusCode
		w.Object = readAnswer(resp)
	}
	w.Name = inc.named(r, w.Object)
	if lose && err == nil {
		w.Injected = true
		n := inc.led.add(w)
		if w.accepted() {
			inc.noteCurrent(r, w, n)
		}
		resp.Body.Close()
		return r.Fail(http.StatusGatewayTimeout, "explore: the answer to this write is lost on purpose"), nil
	}
	n := inc.led.add(w)
	if !w.accepted() {
		return resp, err
	}
	inc.noteCurrent(r, w, n)
	inc.mu.Lock()
	inc.accepted++
	if inc.p.class == Crash && inc.accepted == inc.p.n && !inc.dead {
		inc.dead = true
		close(inc.killed)
	}
	inc.mu.Unlock()
	return resp, err
}

// onlyRun narrows r, a list or watch of a cluster-scoped kind of the operator's, to the
// objects of the run (RunLabel): the runs made at once share the cluster, and each
// operator is to see its run's objects alone, as its cache of its namespace does.
func (inc *incarnation) onlyRun(r *reconciletest.Request) {
	r.HTTP = r.HTTP.Clone(r.HTTP.Context())
	q := r.HTTP.URL.Query()
	selector := RunLabel + "=" + inc.namespace
	if given := q.Get("labelSelector"); given != "" {
		selector = given + "," + selector
	}
	q.Set("labelSelector", selector)
	r.HTTP.URL.RawQuery = q.Encode()
}

// named is the name of the object r writes (obj, its answer, if any), with Namespace
// for the run's namespace: what two runs' writes are compared by.
func (inc *incarnation) named(r *reconciletest.Request, obj map[string]any) string {
	return strings.ReplaceAll(nameOf(r, obj), inc.namespace, Namespace)
}

// noteCurrent records a write of one of the operator's own objects that kstatus reads
// as Current, with what its owner controls at that moment, for currentTooEarly (claims).
func (inc *incarnation) noteCurrent(r *reconciletest.Request, w write, n int) {
	if w.Object == nil || w.Verb == "delete" {
		return
	}
	kind, _ := w.Object["kind"].(string)
	if !inc.ours[kind] {
		return
	}
	u := &unstructured.Unstructured{Object: w.Object}
	res, err := kstatus.Compute(u)
	if err != nil || res.Status != kstatus.CurrentStatus || u.GetDeletionTimestamp() != nil {
		return
	}
	children, err := inc.childrenOf(r.HTTP.Context(), string(u.GetUID()))
	if err != nil {
		return
	}
	inc.mu.Lock()
	inc.current = append(inc.current, currentClaim{write: n, kind: kind, name: u.GetName(), uid: string(u.GetUID()), children: children})
	inc.mu.Unlock()
}

// childrenOf is the state of the objects of the kinds a snapshot covers that uid owns.
func (inc *incarnation) childrenOf(ctx context.Context, uid string) (state, error) {
	objs, err := objectsOf(ctx, inc.admin, inc.namespace, inc.kinds)
	if err != nil {
		return nil, err
	}
	for k, o := range objs {
		if !slices.Contains(ownerUIDs(o.Object), uid) {
			delete(objs, k)
		}
	}
	return inc.normalise(objs, inc.namespace), nil
}

func (inc *incarnation) settled() bool {
	inc.mu.Lock()
	defer inc.mu.Unlock()
	for _, f := range inc.filters {
		if f.holding() {
			return false
		}
	}
	return true
}

// judge applies the oracles to got, compared with ref (nil for the reference itself),
// and adds what they find to rep.
func (ex *explorer) judge(rep *Report, got, ref *result) {
	ex.record(rep, got, ref, ex.violations(got, ref))
}

// violations are what the oracles found in got: what they found while it ran, and what
// those that judge at a run's end find, compared with ref (nil for the reference itself).
// It only reads the explorer: runs made at once are judged at once.
func (ex *explorer) violations(got, ref *result) []Violation {
	vs, us := ex.judgeAt(atEnd, &evidence{got: got, ref: ref})
	got.unjudged = append(got.unjudged, us...)
	vs = append(slices.Clone(got.findings), vs...)
	for i := range vs {
		vs[i].Run, vs[i].Class = got.name, got.p.class
	}
	return vs
}

// atPoint reports whether p perturbs a run at a point of the workload and lets it run
// the rest as the reference run does (crash, fail, lost, stale, unobserved): one whose
// state after each step must be the reference run's. A spec run's steps hold its
// transition and the spec's return, which the differential and "not recovered" judge;
// a run from scratch stops at its object.
func atPoint(p perturbation) bool {
	return p.class != "" && p.class != Spec && p.class != scratch && p.drop == nil
}

// record adds the violations vs of the run got to rep, with the run's report: the
// replay command and the writes of ref and got side by side.
func (ex *explorer) record(rep *Report, got, ref *result, vs []Violation) {
	if len(vs) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "explore %s, run %s: %d violation(s)\n", ex.x.Operator.User, got.name, len(vs))
	for _, v := range vs {
		fmt.Fprintf(&b, "  [%s] %s\n", v.Oracle, v.Detail)
	}
	for _, m := range ex.masks {
		if m.Why != whyServer {
			fmt.Fprintf(&b, "  masked: %s\n", m)
		}
	}
	fmt.Fprintf(&b, "replay: %s\n", ex.replayCommand(got.name))
	if ref != nil {
		b.WriteString(sideBySide(ref.writes, got.writes))
	} else {
		b.WriteString(sideBySide(got.writes, nil))
	}
	rep.Violations = append(rep.Violations, vs...)
	rep.Details = append(rep.Details, b.String())
}

// replayCommand is the command that runs the reference run and the run named name alone.
func (ex *explorer) replayCommand(name string) string {
	pkg := "."
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				if rel, err := filepath.Rel(dir, wd); err == nil {
					pkg = "./" + filepath.ToSlash(rel)
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	parts := strings.Split(ex.t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	// The flags the test binary was given that choose what is explored (the seed, a
	// flag of the test's own that turns its exploration on) are given again; not those
	// that choose how many points, which a replay of one point overrides.
	var given []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "explore.replay", "explore.all", "explore.budget", "explore.parallel":
			return
		}
		if !strings.HasPrefix(f.Name, "explore.") {
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && f.Value.String() == "true" {
			given = append(given, "-"+f.Name)
			return
		}
		given = append(given, shellQuote(fmt.Sprintf("-%s=%s", f.Name, f.Value)))
	})
	extra := ""
	if len(given) > 0 {
		extra = " " + strings.Join(given, " ")
	}
	return fmt.Sprintf("go test -count=1 -run '%s' %s -args -explore.replay=%s%s", strings.Join(parts, "/"), pkg, name, extra)
}

// shellQuote quotes arg for a POSIX shell when it holds anything but letters, digits and
// -_=.,@/: (a regular expression of mutants, say, with spaces or |).
func shellQuote(arg string) string {
	if strings.IndexFunc(arg, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,@/:", r))
	}) < 0 {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}

// sideBySide lays out the writes of two runs in two columns.
func sideBySide(a, b []write) string {
	const width = 64
	var sb strings.Builder
	fmt.Fprintf(&sb, "  %-4s %-*s | %s\n", "#", width, "reference run", "this run")
	cell := func(ws []write, i int) string {
		if i >= len(ws) {
			return ""
		}
		s := ws[i].String()
		if ws[i].Incarnation > 1 {
			s = fmt.Sprintf("[%d] %s", ws[i].Incarnation, s)
		}
		if len(s) > width {
			s = s[:width-1] + "…"
		}
		return s
	}
	for i := 0; i < max(len(a), len(b)); i++ {
		fmt.Fprintf(&sb, "  %-4d %-*s | %s\n", i+1, width, cell(a, i), cell(b, i))
	}
	sb.WriteString("  ([n] marks the writes of the operator's nth incarnation, after a restart)\n")
	return sb.String()
}

func joinWrites(ws []write) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.String()
	}
	return strings.Join(s, "; ")
}

// world is held shared by every run while its operator may be busy, and alone by a run
// that counts its operator's reconciles (the retry storm after an invalid spec):
// controller-runtime counts them for the whole process, and the operators of runs made at
// once, of one exploration or of explorations a test makes in parallel, share its
// counters; the count is a run's own only while the other runs' operators are settled and
// their runs wait.
var world sync.RWMutex

// tally adds up every exploration of the test binary, for Summary.
var tally totals

type totals struct {
	mu                               sync.Mutex
	operators, runs, points, violate int
	first, last                      time.Time // when the first exploration began, the last ended
	mutants, caught, falseAlarms     int
	// unjudged counts what no oracle could judge, by oracle and why in short.
	unjudged map[string]int
}

func (t *totals) add(r *Report, mutant bool, caughtBy []Oracle) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs += r.Runs
	t.points += r.Points
	for _, u := range r.Unjudged {
		if t.unjudged == nil {
			t.unjudged = map[string]int{}
		}
		reason := u.reason
		if reason == "" {
			reason = u.Why
		}
		t.unjudged[string(u.Oracle)+": "+reason]++
	}
	// Explorations made side by side overlap: the time is from the first one's start to
	// the last one's end, not the sum of theirs.
	end := time.Now()
	if begin := end.Add(-r.Duration); t.first.IsZero() || begin.Before(t.first) {
		t.first = begin
	}
	if end.After(t.last) {
		t.last = end
	}
	if mutant {
		t.mutants++
		if r.caught(caughtBy) {
			t.caught++
		}
		t.falseAlarms += len(r.FalseAlarms)
		return
	}
	t.operators++
	t.violate += len(r.Violations)
	t.falseAlarms += len(r.Violations)
}

// Summary is the line that sums up every exploration of the test binary so far, for a
// TestMain to print: the operators explored (mutants apart), the runs made and the
// perturbation points offered, the mutants caught by the oracles they name, the false
// alarms (every violation in an operator that is not a mutant, and every violation in a
// mutant's exploration by an oracle it does not name), and the time it all took (from
// the first exploration's start to the last one's end).
func Summary() string {
	tally.mu.Lock()
	defer tally.mu.Unlock()
	n := 0
	var why []string
	for _, k := range mapsKeys(tally.unjudged) {
		n += tally.unjudged[k]
		why = append(why, fmt.Sprintf("%d %s", tally.unjudged[k], k))
	}
	unjudged := strconv.Itoa(n)
	if n > 0 {
		unjudged += " (" + strings.Join(why, "; ") + ")"
	}
	return fmt.Sprintf("explore: operators=%d runs=%d points=%d mutants_caught=%d/%d false_alarms=%d unjudged=%s seconds=%.0f",
		tally.operators, tally.runs, tally.points, tally.caught, tally.mutants, tally.falseAlarms, unjudged, tally.last.Sub(tally.first).Seconds())
}
