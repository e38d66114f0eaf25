package explore_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/conditions"
	keyvalv1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	keyval "github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	podsetv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	podset "github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// A mutant is a deliberately buggy copy of an example's logic, with one bug of a class
// that Sieve and Acto report, and the class of perturbation expected to catch it ("" for
// the reference run itself, which every class repeats).
type mutant struct {
	bug string
	// oracles are those its one bug faults, one of which must catch it; a violation of
	// any other is a false alarm. "end state" among them where what the bug made (a
	// second child, a registry entry left) is still there at the end.
	oracles  []explore.Oracle
	caughtBy explore.Class
	logic    reconcile.Declaration
	workload func() []explore.Step
}

var mutants = []mutant{
	{
		bug:      "status written before the child exists, never repaired",
		oracles:  []explore.Oracle{explore.CurrentTooEarly, explore.WritesOnceConverged},
		caughtBy: "",
		logic:    podsetMutant(statusFirst{}),
		workload: podsetWorkload,
	},
	{
		bug:      "a phase advanced before its side effect is recorded",
		oracles:  []explore.Oracle{explore.EndState},
		caughtBy: explore.Crash,
		logic:    podsetMutant(recordFirst{}),
		workload: podsetWorkload,
	},
	{
		bug:      "a child created under a generated name",
		oracles:  []explore.Oracle{explore.CreatedTwice, explore.EndState},
		caughtBy: explore.Crash,
		logic:    podsetMutant(generatedName{}),
		workload: podsetWorkload,
	},
	{
		bug:      "ownership checked by name instead of UID",
		oracles:  []explore.Oracle{explore.NotControlled},
		caughtBy: "",
		logic:    podsetMutant(byName{}),
		workload: podsetWorkload,
	},
	{
		bug:      "a deletion decided on stale state",
		oracles:  []explore.Oracle{explore.CreatedTwice, explore.DeletedWrongly},
		caughtBy: explore.Stale,
		logic:    podsetMutant(orphanCleanup{}),
		workload: podsetWorkload,
	},
	{
		bug:      "a default that fights the API server",
		oracles:  []explore.Oracle{explore.WritesOnceConverged},
		caughtBy: "",
		logic:    podsetMutant(fightDefaults{}),
		workload: podsetWorkload,
	},
	{
		bug:      "an error swallowed into Ready",
		oracles:  []explore.Oracle{explore.EndState},
		caughtBy: explore.Fail,
		logic:    podsetMutant(swallowError{done: &sync.Map{}}),
		workload: podsetWorkload,
	},
	{
		bug:      "an intent held in memory only",
		oracles:  []explore.Oracle{explore.CreatedTwice, explore.EndState},
		caughtBy: explore.Crash,
		logic:    podsetMutant(intentInMemory{creating: &sync.Map{}}),
		workload: podsetWorkload,
	},
	{
		bug:      "observedGeneration ignored",
		oracles:  []explore.Oracle{explore.SpecNotActedOn, explore.SpecNotReached, explore.NotRecovered},
		caughtBy: explore.Spec,
		logic:    podsetMutant(observedOnce{}),
		workload: podsetOnce,
	},
	{
		bug:      "a retry storm on an invalid spec",
		oracles:  []explore.Oracle{explore.InvalidSpecNotStalled, explore.RetryStorm},
		caughtBy: explore.Spec,
		logic:    podsetMutant(retryInvalid{}),
		workload: podsetOnce,
	},
	{
		bug:      "a step taken on the event of an intermediate state",
		oracles:  []explore.Oracle{explore.EndState},
		caughtBy: explore.Unobserved,
		logic:    edgeTriggered(),
		workload: podsetWorkload,
	},
	{
		bug:      "a finalizer removed before its cleanup",
		oracles:  []explore.Oracle{explore.LeftBehind, explore.EndState},
		caughtBy: explore.Crash,
		logic:    keyvalMutant(),
		workload: keyvalWorkload,
	},
}

// allMutants explores every mutant; without it, the package's usual tests explore the one
// its reference run catches at least cost, and make test-explore the rest.
var allMutants = flag.Bool("explore.mutants", false, "explore every mutant, not only the cheapest")

// TestExploringAMutantCatchesIt explores each mutant with the class expected to catch it
// alone, stopping at its first point that does: the report must name that class and the
// bug's violation.
//
// The mutants are explored side by side (as many as -test.parallel allows), each an
// operator of its own in namespaces of its own; their operators are started first, one
// after another, on the shared control plane.
func TestExploringAMutantCatchesIt(t *testing.T) {
	operators := map[int]*reconciletest.Operator{}
	for i, m := range mutants {
		if *allMutants || m.bug == "a default that fights the API server" {
			operators[i] = startOn(t, mutantOperator(fmt.Sprintf("mutant-%d", i), m.logic))
		}
	}
	t.Parallel() // beside the package's other explorations, its operators started
	for i, m := range mutants {
		o, ok := operators[i]
		if !ok {
			continue
		}
		t.Run(strings.ReplaceAll(m.bug, " ", "_"), func(t *testing.T) {
			t.Parallel()
			x := explore.Exploration{Operator: o, Workload: m.workload(), Mutant: m.bug, CaughtBy: m.oracles, StopAtFirst: true}
			if m.caughtBy != "" {
				x.Classes = []explore.Class{m.caughtBy}
			} else {
				x.Classes = []explore.Class{}
			}
			r := explore.Explore(t, x)
			for _, v := range r.FalseAlarms {
				t.Errorf("false alarm: the mutant %q is to be caught by %q, and %v", m.bug, m.oracles, v)
			}
			if !slices.ContainsFunc(m.oracles, func(oracle explore.Oracle) bool { return r.Caught(m.caughtBy, oracle) }) {
				t.Fatalf("the mutant %q was not caught by %q in %q: %d runs, violations %v", m.bug, m.oracles, m.caughtBy, r.Runs, r.Violations)
			}
			t.Logf("caught %q: %v", m.bug, r.Violations[0])
			if testing.Verbose() {
				t.Log(r.Details[0])
			}
		})
	}
}

// mutantOperator is an operator of the examples' types with a mutant's logic and a role
// that allows whatever a mutant does.
func mutantOperator(user string, d reconcile.Declaration) *reconciletest.Operator {
	return &reconciletest.Operator{
		User: user,
		AddToScheme: func(s *runtime.Scheme) error {
			if err := podsetv1alpha1.AddToScheme(s); err != nil {
				return err
			}
			return keyvalv1alpha1.AddToScheme(s)
		},
		CRDDirectories: []string{
			filepath.Join(examples, "podset", "config", "crd", "bases"),
			filepath.Join(examples, "keyval", "config", "crd", "bases"),
		},
		Role:        filepath.Join("testdata", "mutant-role.yaml"),
		Controllers: []reconcile.Declaration{d},
	}
}

// podsetMutant declares a PodSet controller with logic, a Deployment of its own for each.
func podsetMutant(logic reconcile.Logic[*podsetv1alpha1.PodSet]) reconcile.Declaration {
	return reconcile.For(&podsetv1alpha1.PodSet{}, logic, "podset-operator",
		reconcile.WithChildren(&appsv1.Deployment{}),
	)
}

// invalidSize says the PodSet's size is one its schema refuses, which ensured reports
// Stalled.
func invalidSize(ps *podsetv1alpha1.PodSet) bool {
	return ps.Spec.Size < 0 || ps.Spec.Size > podset.MaxSize
}

// ensured is the correct PodSet logic's core: a size its schema refuses reported Stalled,
// else its Deployment, and its readiness in the status.
func ensured(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if invalidSize(ps) {
		conditions.MarkTrue(ps, conditions.Stalled, podset.ReasonInvalidSpec, "spec.size %d is not between 0 and %d", ps.Spec.Size, podset.MaxSize)
		return requeue.Done()
	}
	dep, _, err := ownership.Ensure(ctx, s.Writer, ps, podset.Deployment(ps))
	switch {
	case ownership.IsNotControlled(err):
		conditions.MarkTrue(ps, conditions.Stalled, "DeploymentNotOwned", "%v", err)
		return requeue.Done()
	case err != nil:
		return requeue.Retry(err)
	}
	readiness.Deployment(dep).Mark(ps)
	return requeue.Done()
}

// statusFirst reports the PodSet Ready before its Deployment exists, and believes it
// afterwards: a PodSet reported Ready is not reconciled again.
type statusFirst struct{}

func (statusFirst) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if conditions.IsTrue(ps, conditions.Ready) {
		return requeue.Done()
	}
	conditions.MarkTrue(ps, conditions.Ready, "Created", "the Deployment is created")
	if err := s.Client.Status().Update(ctx, ps); err != nil {
		return requeue.Retry(err)
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, ps, podset.Deployment(ps)); err != nil {
		return requeue.Retry(err)
	}
	return requeue.Done()
}

// recordFirst records the size it is about to apply in the status before it applies it,
// and takes a recorded size for an applied one. A size its schema refuses it reports
// Stalled, as the correct logic does: its one bug is the phase recorded first.
type recordFirst struct{}

func (recordFirst) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if invalidSize(ps) {
		return ensured(ctx, ps, s)
	}
	if ps.Status.Replicas == ps.Spec.Size {
		return requeue.Done()
	}
	ps.Status.Replicas = ps.Spec.Size
	if err := s.Client.Status().Update(ctx, ps); err != nil {
		return requeue.Retry(err)
	}
	out := ensured(ctx, ps, s)
	ps.Status.Replicas = ps.Spec.Size
	return out
}

// generatedName creates the PodSet's Deployment under a name the API server generates,
// and records that name in the status (as its selector) afterwards: a PodSet whose status
// records none gets a new Deployment. A size its schema refuses it reports Stalled, as the
// correct logic does: its one bug is the generated name.
type generatedName struct{}

func (generatedName) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if invalidSize(ps) {
		return ensured(ctx, ps, s)
	}
	if ps.Status.Selector != "" {
		return requeue.Done()
	}
	return createUnderGeneratedName(ctx, ps, s)
}

// createUnderGeneratedName creates the PodSet's Deployment under a name the API server
// generates, and records that name in the status: what the mutants that lose track of it do.
func createUnderGeneratedName(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	d := podset.Deployment(ps)
	d.Name, d.GenerateName = "", ps.Name+"-"
	if err := controllerutil.SetControllerReference(ps, d, s.Client.Scheme()); err != nil {
		return requeue.Terminal(err)
	}
	if err := s.Client.Create(ctx, d); err != nil {
		return requeue.Retry(err)
	}
	ps.Status.Selector = "deployment=" + d.Name
	return requeue.Done()
}

// byName takes the Deployment of the PodSet's name for its own, whoever controls it.
type byName struct{}

func (byName) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	var live appsv1.Deployment
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: ps.Name}, &live)
	if apierrors.IsNotFound(err) {
		return ensured(ctx, ps, s)
	}
	if err != nil {
		return requeue.Retry(err)
	}
	if live.Spec.Replicas == nil || *live.Spec.Replicas != ps.Spec.Size {
		live.Spec.Replicas = &ps.Spec.Size
		if err := s.Client.Update(ctx, &live); err != nil {
			return requeue.Retry(err)
		}
	}
	return requeue.Done()
}

// orphanCleanup deletes the Deployments of PodSets it does not find in its cache, on
// every reconcile of any PodSet.
type orphanCleanup struct{}

func (orphanCleanup) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	var list appsv1.DeploymentList
	if err := s.Client.List(ctx, &list, client.InNamespace(ps.Namespace), client.MatchingLabels{"app.kubernetes.io/managed-by": "podset-operator"}); err != nil {
		return requeue.Retry(err)
	}
	for i := range list.Items {
		d := &list.Items[i]
		owner := d.Labels["app.kubernetes.io/instance"]
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: owner}, &podsetv1alpha1.PodSet{})
		if apierrors.IsNotFound(err) {
			if err := s.Client.Delete(ctx, d); client.IgnoreNotFound(err) != nil {
				return requeue.Retry(err)
			}
		}
	}
	return ensured(ctx, ps, s)
}

// fightDefaults writes the Deployment's whole spec whenever it differs from the one it
// wants, which lacks what the API server defaults: it always does.
type fightDefaults struct{}

func (fightDefaults) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	want := podset.Deployment(ps)
	var live appsv1.Deployment
	err := s.Client.Get(ctx, client.ObjectKeyFromObject(want), &live)
	if apierrors.IsNotFound(err) {
		return ensured(ctx, ps, s)
	}
	if err != nil {
		return requeue.Retry(err)
	}
	if !metav1.IsControlledBy(&live, ps) {
		return ensured(ctx, ps, s)
	}
	if !equality.Semantic.DeepEqual(live.Spec, want.Spec) {
		live.Spec = want.Spec
		if err := s.Client.Update(ctx, &live); err != nil {
			return requeue.Retry(err)
		}
	}
	return requeue.Done()
}

// swallowError reports the PodSet Ready when its Deployment cannot be written, and asks
// for no retry; like many an operator, it remembers each generation it has reconciled and
// does nothing more for it. A size its schema refuses it reports Stalled, as the correct
// logic does: its one bug is the error swallowed.
type swallowError struct{ done *sync.Map }

func (m swallowError) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if invalidSize(ps) {
		return ensured(ctx, ps, s)
	}
	key := fmt.Sprintf("%s/%d", ps.UID, ps.Generation)
	if _, done := m.done.Load(key); done {
		return requeue.Done()
	}
	dep, _, err := ownership.Ensure(ctx, s.Writer, ps, podset.Deployment(ps))
	if err != nil && !ownership.IsNotControlled(err) {
		conditions.MarkTrue(ps, conditions.Ready, "Reconciled", "reconciled")
		m.done.Store(key, true)
		return requeue.Done()
	}
	if err != nil {
		conditions.MarkTrue(ps, conditions.Stalled, "DeploymentNotOwned", "%v", err)
		return requeue.Done()
	}
	readiness.Deployment(dep).Mark(ps)
	return requeue.Done()
}

// intentInMemory creates the PodSet's Deployment under a generated name and records the
// name in the status; before a create it notes, in memory alone, that it is about to
// make one, and when a note is there it first looks (on the API server) for a Deployment
// it may have made: a failed or lost create is found again, a create made just before
// the process died is not. Its memory is its manager's (noted by the manager's API
// reader): the managers of a run share the mutant's value, as a restarted process would
// not. A size its schema refuses it reports Stalled, as the correct logic does: its one
// bug is the intent kept in memory.
type intentInMemory struct{ creating *sync.Map }

// intent is what intentInMemory notes: an object, in one manager's memory.
type intent struct {
	manager client.Reader
	uid     types.UID
}

func (m intentInMemory) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if invalidSize(ps) {
		return ensured(ctx, ps, s)
	}
	if ps.Status.Selector != "" {
		return requeue.Done()
	}
	if _, noted := m.creating.Load(intent{s.APIReader, ps.UID}); noted {
		if found, err := recordControlled(ctx, s.APIReader, ps); err != nil || found {
			return requeue.Retry(err)
		}
	}
	m.creating.Store(intent{s.APIReader, ps.UID}, true)
	return createUnderGeneratedName(ctx, ps, s)
}

// recordControlled looks in r for a Deployment ps controls and, when there is one, records
// its name in ps's status as the mutants that name their Deployment by generateName do.
func recordControlled(ctx context.Context, r client.Reader, ps *podsetv1alpha1.PodSet) (bool, error) {
	var list appsv1.DeploymentList
	if err := r.List(ctx, &list, client.InNamespace(ps.Namespace)); err != nil {
		return false, err
	}
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], ps) {
			ps.Status.Selector = "deployment=" + list.Items[i].Name
			return true, nil
		}
	}
	return false, nil
}

// podsetOnce creates a PodSet and deletes it: a workload that changes no spec, which the
// spec transitions change.
func podsetOnce() []explore.Step {
	web := &podsetv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: podsetv1alpha1.PodSetSpec{Size: 2}}
	return []explore.Step{explore.Create(web), explore.Delete(web)}
}

// observedOnce takes a PodSet whose status has observed a generation for one whose status
// observed this one: it compares status.observedGeneration with 0, not with
// metadata.generation, and so reports Ready, for the new generation, a spec it never
// applied.
type observedOnce struct{}

func (observedOnce) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if ps.Status.ObservedGeneration > 0 {
		return requeue.Done()
	}
	return ensured(ctx, ps, s)
}

// retryInvalid returns an error for a size its schema refuses, every time, where it
// should report the PodSet Stalled: retried with backoff, without end.
type retryInvalid struct{}

func (retryInvalid) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if invalidSize(ps) {
		return requeue.Retry(fmt.Errorf("spec.size %d is not between 0 and %d", ps.Spec.Size, podset.MaxSize))
	}
	return ensured(ctx, ps, s)
}

// The phases edgeTriggered records in a PodSet's status.selector.
const (
	phasePending = "phase=pending"
	phaseWaiting = "phase=waiting"
)

// edgeTriggered declares a PodSet controller that records a new PodSet pending and then
// waiting, and makes its Deployment when its watch shows it the PodSet pending: a step
// taken on the event of an intermediate state, not on the state. A restarted operator
// resumes every PodSet past pending that its first list shows it.
func edgeTriggered() reconcile.Declaration {
	seen := &sync.Map{}
	events := handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[rtreconcile.Request]) {
			if e.Object.(*podsetv1alpha1.PodSet).Status.Selector != "" {
				seen.Store(e.Object.GetUID(), true)
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[rtreconcile.Request]) {
			if e.ObjectNew.(*podsetv1alpha1.PodSet).Status.Selector == phasePending {
				seen.Store(e.ObjectNew.GetUID(), true)
				q.Add(rtreconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.ObjectNew)})
			}
		},
	}
	return reconcile.For(&podsetv1alpha1.PodSet{}, pendingThenWaiting{seen: seen}, "podset-operator",
		reconcile.WithChildren(&appsv1.Deployment{}),
		reconcile.WithWatch(&podsetv1alpha1.PodSet{}, events),
	)
}

type pendingThenWaiting struct{ seen *sync.Map }

func (m pendingThenWaiting) Reconcile(ctx context.Context, ps *podsetv1alpha1.PodSet, s reconcile.Scope) requeue.Outcome {
	if _, ok := m.seen.Load(ps.UID); ok {
		return ensured(ctx, ps, s)
	}
	if ps.Status.Selector != "" {
		return requeue.Done() // its pending event will make the Deployment
	}
	for _, phase := range []string{phasePending, phaseWaiting} {
		ps.Status.Selector = phase
		if err := s.Client.Status().Update(ctx, ps); err != nil {
			return requeue.Retry(err)
		}
	}
	return requeue.Done()
}

// registryFinalizer holds a Keyval until its registry entry, a ConfigMap nothing owns, is
// deleted.
const registryFinalizer = "store.example.com/registry"

// keyvalMutant declares a Keyval controller that registers each Keyval in a ConfigMap of
// its own, which nothing owns, and whose finalizer lets the Keyval go before it deletes
// that ConfigMap.
func keyvalMutant() reconcile.Declaration {
	return reconcile.For(&keyvalv1alpha1.Keyval{}, registry{}, "keyval-operator",
		reconcile.WithChildren(&corev1.ConfigMap{}),
	).
		WithFinalizer(registryFinalizer, unregister)
}

type registry struct{}

func registryOf(kv *keyvalv1alpha1.Keyval) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kv.Namespace, Name: kv.Name + "-registry"}}
}

func (registry) Reconcile(ctx context.Context, kv *keyvalv1alpha1.Keyval, s reconcile.Scope) requeue.Outcome {
	// A spec its schema refuses is Stalled, as the example's logic has it: the mutant's
	// one bug is its finalizer.
	if err := keyval.Invalid(kv); err != nil {
		conditions.MarkTrue(kv, conditions.Stalled, keyval.ReasonInvalidSpec, "%v", err)
		return requeue.Done()
	}
	cm := registryOf(kv)
	err := s.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	if apierrors.IsNotFound(err) {
		cm.Data = map[string]string{"replicas": fmt.Sprint(kv.Spec.Replicas)}
		err = s.Client.Create(ctx, cm)
	}
	if err != nil {
		return requeue.Retry(err)
	}
	conditions.MarkTrue(kv, conditions.Ready, "Registered", "registered")
	return requeue.Done()
}

// unregister lets the Keyval go first, and then deletes its registry entry.
func unregister(ctx context.Context, kv *keyvalv1alpha1.Keyval, s reconcile.Scope) requeue.Outcome {
	if slices.Contains(kv.Finalizers, registryFinalizer) {
		kv.Finalizers = slices.DeleteFunc(kv.Finalizers, func(f string) bool { return f == registryFinalizer })
		if err := s.Client.Update(ctx, kv); client.IgnoreNotFound(err) != nil {
			return requeue.Retry(err)
		}
	}
	if err := s.Client.Delete(ctx, registryOf(kv)); client.IgnoreNotFound(err) != nil {
		return requeue.Retry(err)
	}
	return requeue.Done()
}
