package explore_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest/explore"
	"github.com/reconcilekit/reconcilekit/requeue"
)

// The corpus is of correct operators unlike the examples, each with one-bug variants: what
// the exploration must find nothing wrong with, and what it must catch, by the oracle the
// bug names. They reconcile a Shop (testdata/corpus), whose spec is a free string and a
// map: the spec transitions give both new values and remove them.

var corpusFlag = flag.Bool("explore.corpus", false, "explore the corpus of correct operators at every point, and their one-bug variants")

// Shop is the corpus's custom resource.
type Shop struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ShopSpec   `json:"spec,omitempty"`
	Status            ShopStatus `json:"status,omitempty"`
}

// ShopSpec is what a Shop asks for.
type ShopSpec struct {
	Tier   string            `json:"tier,omitempty"`
	Config map[string]string `json:"config,omitempty"`
}

// ShopStatus is what the operator reports of a Shop.
type ShopStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

func (s *Shop) GetConditions() []metav1.Condition  { return s.Status.Conditions }
func (s *Shop) SetConditions(c []metav1.Condition) { s.Status.Conditions = c }
func (s *Shop) GetObservedGeneration() int64       { return s.Status.ObservedGeneration }
func (s *Shop) SetObservedGeneration(g int64)      { s.Status.ObservedGeneration = g }

func (s *Shop) DeepCopyObject() runtime.Object {
	c := *s
	s.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Config = maps.Clone(s.Spec.Config)
	c.Status.Conditions = slices.Clone(s.Status.Conditions)
	return &c
}

// ShopList is a list of Shops.
type ShopList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shop `json:"items"`
}

func (l *ShopList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Shop, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Shop)
	}
	return &c
}

var shopVersion = schema.GroupVersion{Group: "corpus.example.com", Version: "v1"}

func addCorpus(s *runtime.Scheme) error {
	s.AddKnownTypes(shopVersion, &Shop{}, &ShopList{}, &Tenant{}, &TenantList{})
	metav1.AddToGroupVersion(s, shopVersion)
	return nil
}

const shopLabel = "corpus.example.com/shop"

// shopWorkload creates a Shop of a tier with a configuration, changes the configuration,
// and deletes it.
func shopWorkload() []explore.Step {
	shop := &Shop{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: ShopSpec{Tier: "gold", Config: map[string]string{"greeting": "hello"}}}
	return []explore.Step{
		explore.Create(shop),
		explore.Update("a new greeting", shop, func(o client.Object) { o.(*Shop).Spec.Config["greeting"] = "bonjour" }),
		explore.Delete(shop),
	}
}

// corpusOperator is an operator of Shops with logic d.
func corpusOperator(user string, d reconcile.Declaration) *reconciletest.Operator {
	return &reconciletest.Operator{
		User:           user,
		AddToScheme:    addCorpus,
		CRDDirectories: []string{filepath.Join("testdata", "corpus", "crd")},
		Role:           filepath.Join("testdata", "corpus", "role.yaml"),
		Controllers:    []reconcile.Declaration{d},
	}
}

func shopOf(logic reconcile.Logic[*Shop], opts ...reconcile.Option) *reconcile.Controller[*Shop] {
	return reconcile.For(&Shop{}, logic, "shop-operator", opts...)
}

// A corpus entry: a correct operator and its one-bug variants.
type corpusEntry struct {
	name     string
	operator reconcile.Declaration
	variants []mutant
	// masked are the masks its exploration must learn from its reference runs.
	masked []string
	// workload is what its explorations run; nil means shopWorkload.
	workload func() []explore.Step
}

var corpus = []corpusEntry{
	{
		name:     "a Job named by a hash of its configuration, older Jobs deleted",
		operator: shopOf(hashJob{deleteOlder: true}, reconcile.WithChildren(&batchv1.Job{})),
		variants: []mutant{{
			bug: "older Jobs never deleted",
			// The old Job stays after the transition, the transition's after the spec's
			// return, and both at the end.
			oracles:  []explore.Oracle{explore.SpecNotReached, explore.NotRecovered, explore.EndState},
			caughtBy: explore.Spec,
			logic:    shopOf(hashJob{}, reconcile.WithChildren(&batchv1.Job{})),
		}},
	},
	{
		name:     "a Secret of random data made once",
		operator: shopOf(credentials{}, reconcile.WithChildren(&corev1.Secret{})),
		masked:   []string{"Secret shop-credentials data.password: differs between reference runs"},
		variants: []mutant{{
			bug: "a password made again at every reconcile",
			// It may look settled between two of its writes a second apart; the restart
			// that proves convergence then writes again.
			oracles:  []explore.Oracle{explore.NeverSettled, explore.WritesOnceConverged},
			caughtBy: "",
			logic:    shopOf(credentials{everyTime: true}, reconcile.WithChildren(&corev1.Secret{})),
		}},
	},
	{
		name:     "children named by generateName, one for each purpose",
		operator: shopOf(generated{}, reconcile.WithChildren(&corev1.ConfigMap{})),
		variants: []mutant{{
			bug:      "a failed create of a generated child made again at once",
			oracles:  []explore.Oracle{explore.CreatedTwice, explore.EndState}, // the second child is still there at the end
			caughtBy: explore.Lost,
			logic:    shopOf(generated{againAtOnce: true}, reconcile.WithChildren(&corev1.ConfigMap{})),
		}},
	},
	{
		name:     "a finalizer that deletes a registration the operator does not own",
		operator: registration(false),
		variants: []mutant{{
			bug:      "a registration's absence taken for a failed cleanup",
			oracles:  []explore.Oracle{explore.LeftBehind, explore.EndState},
			caughtBy: explore.Lost,
			logic:    registration(true),
		}},
	},
	{
		name:     "a DaemonSet labelled by the shop's tier",
		operator: shopOf(daemons{}, reconcile.WithChildren(&appsv1.DaemonSet{})),
		variants: []mutant{{
			bug:      "a tier's label never removed",
			oracles:  []explore.Oracle{explore.SpecNotReached},
			caughtBy: explore.Spec,
			logic:    shopOf(daemons{keepLabels: true}, reconcile.WithChildren(&appsv1.DaemonSet{})),
		}},
	},
	{
		name:     "a cluster-scoped Tenant owning its settings in a namespace",
		operator: tenantOf(settings{}),
		workload: tenantWorkload,
		variants: []mutant{{
			bug: "settings made with no owner, as if a cluster-scoped owner could not own them",
			// Nothing deletes them once their tenant has gone: the reference run finds them.
			oracles:  []explore.Oracle{explore.LeftBehind},
			caughtBy: "",
			logic:    tenantOf(settings{unowned: true}),
			workload: tenantWorkload,
		}},
	},
	storefrontEntry,
	appEntry,
}

// TestExploringTheCorpusFindsNothingAndCatchesEachVariant explores each operator of the
// corpus at every point (-explore.all, up to each class's cap): no oracle may fault it;
// and each one-bug variant with the class expected to catch it, until caught: the oracle
// it names must, and no other may. Under -explore.corpus (make test-explore).
func TestExploringTheCorpusFindsNothingAndCatchesEachVariant(t *testing.T) {
	if !*corpusFlag {
		t.Skip("the corpus is explored by make test-explore (-explore.corpus)")
	}
	type run struct {
		name     string
		o        *reconciletest.Operator
		m        *mutant
		masked   []string
		workload func() []explore.Step
	}
	var runs []run
	for i, c := range corpus {
		workload := c.workload
		if workload == nil {
			workload = shopWorkload
		}
		runs = append(runs, run{c.name, startOn(t, corpusOperator(fmt.Sprintf("corpus-%d", i), c.operator)), nil, c.masked, workload})
		for j := range c.variants {
			v := &c.variants[j]
			runs = append(runs, run{c.name + ": " + v.bug, startOn(t, corpusOperator(fmt.Sprintf("corpus-%d-variant-%d", i, j), v.logic)), v, nil, workload})
		}
	}
	t.Parallel() // beside the package's other explorations, its operators started
	for _, r := range runs {
		t.Run(strings.ReplaceAll(r.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			if r.m == nil {
				rep := explore.Run(t, explore.Exploration{Operator: r.o, Workload: r.workload()})
				for _, want := range r.masked {
					if !slices.ContainsFunc(rep.Masks, func(m explore.Mask) bool { return m.String() == want }) {
						t.Errorf("the exploration did not learn the mask %q: %v", want, rep.Masks)
					}
				}
				exploredMu.Lock()
				defer exploredMu.Unlock()
				explored = append(explored, fmt.Sprintf("explore corpus %q: runs=%d points=%d violations=%d unjudged=%d seconds=%.0f masked=%d sampled=%v",
					r.name, rep.Runs, rep.Points, len(rep.Violations), len(rep.Unjudged), rep.Duration.Seconds(), learned(rep), rep.Sampled))
				return
			}
			m := r.m
			x := explore.Exploration{Operator: r.o, Workload: r.workload(), Mutant: m.bug, CaughtBy: m.oracles, StopAtFirst: true, Classes: []explore.Class{}}
			if m.caughtBy != "" {
				x.Classes = []explore.Class{m.caughtBy}
			}
			rep := explore.Explore(t, x)
			for _, v := range rep.FalseAlarms {
				t.Errorf("false alarm: the variant %q is to be caught by %q, and %v", m.bug, m.oracles, v)
			}
			if !slices.ContainsFunc(m.oracles, func(o explore.Oracle) bool { return rep.Caught(m.caughtBy, o) }) {
				t.Fatalf("the variant %q was not caught by %q in %q: %d runs, violations %v", m.bug, m.oracles, m.caughtBy, rep.Runs, rep.Violations)
			}
			if slices.Contains(m.oracles, explore.NeverSettled) && (!rep.Unsettled || rep.Runs != 2) {
				t.Errorf("an unsettled reference run did not end the exploration: unsettled %v, %d runs", rep.Unsettled, rep.Runs)
			}
			t.Logf("caught %q: %v", m.bug, rep.Violations[0])
		})
	}
}

// learned counts the masks an exploration learnt from its reference runs.
func learned(r *explore.Report) int {
	n := 0
	for _, m := range r.Masks {
		if strings.Contains(m.Why, "reference runs") {
			n++
		}
	}
	return n
}

// ready marks the shop Ready.
func ready(shop *Shop, reason string) requeue.Outcome {
	conditions.MarkTrue(shop, conditions.Ready, reason, "the shop is ready")
	return requeue.Done()
}

// hashJob runs an init Job named by a hash of the shop's configuration, made once for
// each configuration; with deleteOlder, the Jobs of its configurations before are deleted.
type hashJob struct{ deleteOlder bool }

func configHash(config map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(config)) {
		fmt.Fprintf(h, "%s=%s\n", k, config[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}

func (l hashJob) Reconcile(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(shop.Spec.Config)) {
		args = append(args, k+"="+shop.Spec.Config[k])
	}
	labels := map[string]string{shopLabel: shop.Name}
	tmpl := restrictedTemplate(labels)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	tmpl.Spec.Containers[0].Command = append([]string{"echo"}, args...)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name + "-init-" + configHash(shop.Spec.Config), Labels: labels},
		Spec:       batchv1.JobSpec{Template: tmpl},
	}
	// A Job's template cannot change: each configuration has a Job of its own.
	if _, _, err := ownership.Ensure(ctx, s.Writer, shop, job, ownership.CreateOnly()); err != nil {
		return requeue.Retry(err)
	}
	if l.deleteOlder {
		var jobs batchv1.JobList
		if err := s.Client.List(ctx, &jobs, client.InNamespace(shop.Namespace), client.MatchingLabels(labels)); err != nil {
			return requeue.Retry(err)
		}
		for i := range jobs.Items {
			if old := &jobs.Items[i]; old.Name != job.Name {
				if _, err := ownership.Delete(ctx, s.Writer, shop, old); err != nil {
					return requeue.Retry(err)
				}
			}
		}
	}
	return ready(shop, "Initialised")
}

// credentials makes a Secret with a random password once; with everyTime, a new
// password at every reconcile.
type credentials struct{ everyTime bool }

func (l credentials) Reconcile(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name + "-credentials"},
		StringData: map[string]string{"user": "shop", "password": rand.Text()},
	}
	var opts []ownership.Option
	if !l.everyTime {
		opts = append(opts, ownership.CreateOnly())
	} else {
		secret.Data, secret.StringData = map[string][]byte{"user": []byte("shop"), "password": []byte(rand.Text())}, nil
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, shop, secret, opts...); err != nil {
		return requeue.Retry(err)
	}
	return ready(shop, "Credentials")
}

// generated makes two ConfigMaps named by generateName, one for each purpose, each found
// again by its purpose through the API server (uncached: what decides to create must not
// be stale); with againAtOnce, a create that fails is made again at once, though it may
// have been made.
type generated struct{ againAtOnce bool }

const purposeLabel = "corpus.example.com/purpose"

func (l generated) Reconcile(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
	for _, purpose := range []string{"settings", "scripts"} {
		labels := map[string]string{shopLabel: shop.Name, purposeLabel: purpose}
		var have corev1.ConfigMapList
		if err := s.APIReader.List(ctx, &have, client.InNamespace(shop.Namespace), client.MatchingLabels(labels)); err != nil {
			return requeue.Retry(err)
		}
		if len(have.Items) > 0 {
			continue
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, GenerateName: shop.Name + "-", Labels: labels},
			Data:       map[string]string{"purpose": purpose},
		}
		if err := controllerutil.SetControllerReference(shop, cm, s.Client.Scheme()); err != nil {
			return requeue.Terminal(err)
		}
		err := s.Client.Create(ctx, cm)
		if err != nil && l.againAtOnce {
			cm.Name, cm.ResourceVersion = "", ""
			err = s.Client.Create(ctx, cm)
		}
		if err != nil {
			return requeue.Retry(err)
		}
	}
	return ready(shop, "Generated")
}

// registration registers each shop in a ConfigMap that nothing owns (a registry's entry,
// someone else's to keep), marked with the shop's UID, and deletes it in its finalizer,
// which is done once the registration is gone. With notFoundFails, the finalizer takes
// the registration's absence for a failure: a delete whose answer was lost, made all the
// same, is retried for ever, and the shop never goes.
func registration(notFoundFails bool) reconcile.Declaration {
	return shopOf(registrar{}).WithFinalizer("corpus.example.com/registration",
		func(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
			return unregisterShop(ctx, shop, s, notFoundFails)
		})
}

type registrar struct{}

const registeredBy = "corpus.example.com/registered-by"

func registrationOf(shop *Shop) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name + "-registration",
		Annotations: map[string]string{registeredBy: string(shop.UID)}}}
}

func (registrar) Reconcile(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
	want := registrationOf(shop)
	live := &corev1.ConfigMap{}
	// Read from the API server: the registration is not a child, which the cache would
	// hold, and whether to create it must not be decided on a stale read.
	err := s.APIReader.Get(ctx, client.ObjectKeyFromObject(want), live)
	if apierrors.IsNotFound(err) {
		if err = s.Client.Create(ctx, want); err == nil {
			live = want
		}
	}
	if err != nil {
		return requeue.Retry(err) // AlreadyExists among them: read again
	}
	if live.Annotations[registeredBy] != string(shop.UID) {
		conditions.MarkTrue(shop, conditions.Stalled, "RegistrationTaken", "%s is someone else's", want.Name)
		return requeue.Done()
	}
	return ready(shop, "Registered")
}

func unregisterShop(ctx context.Context, shop *Shop, s reconcile.Scope, notFoundFails bool) requeue.Outcome {
	live := &corev1.ConfigMap{}
	err := s.APIReader.Get(ctx, client.ObjectKeyFromObject(registrationOf(shop)), live)
	if apierrors.IsNotFound(err) && !notFoundFails {
		return requeue.Done() // gone: the cleanup is done
	}
	if err != nil {
		return requeue.Retry(err)
	}
	if live.Annotations[registeredBy] != string(shop.UID) {
		return requeue.Done() // someone else's: not ours to delete
	}
	err = s.Client.Delete(ctx, live, client.Preconditions{UID: &live.UID})
	return requeue.Retry(client.IgnoreNotFound(err))
}

// daemons runs a DaemonSet for each shop, labelled by its tier when it has one; with
// keepLabels, the labels the live DaemonSet has are kept, so a tier's label outlives it.
type daemons struct{ keepLabels bool }

const tierLabel = "corpus.example.com/tier"

func (l daemons) Reconcile(ctx context.Context, shop *Shop, s reconcile.Scope) requeue.Outcome {
	selector := map[string]string{shopLabel: shop.Name}
	labels := maps.Clone(selector)
	if l.keepLabels {
		live := &appsv1.DaemonSet{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: shop.Namespace, Name: shop.Name}, live); err == nil {
			maps.Copy(labels, live.Labels)
		}
	}
	if shop.Spec.Tier != "" {
		labels[tierLabel] = shop.Spec.Tier
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop.Namespace, Name: shop.Name, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: restrictedTemplate(selector),
		},
	}
	if _, _, err := ownership.Ensure(ctx, s.Writer, shop, ds); err != nil {
		return requeue.Retry(err)
	}
	return ready(shop, "Running")
}
