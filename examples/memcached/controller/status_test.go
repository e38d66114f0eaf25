package controller_test

// What standard clients read from a Memcached: kstatus' verdict (the library Flux and
// cli-utils compute status with), the condition `kubectl wait --for=condition=Ready`
// waits for, the events on the Memcached, and its scale subresource.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

func TestStatusOfAMemcachedAsStandardClientsReadIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before makes what exists in the namespace before the Memcached.
		before func(t *testing.T, e *env)
		// then happens to the Memcached once it exists.
		then func(t *testing.T, e *env, mc *cachev1beta1.Memcached)
		// want is the verdict the Memcached settles at, with its Ready condition's reason.
		want   reconciletest.Verdict
		reason string
		// event is the event recorded on the Memcached on its way there, if any.
		event *reconciletest.Event
	}{
		{
			name: "converged: Current, and Ready",
			want: reconciletest.Verdict{Status: kstatus.CurrentStatus, Ready: metav1.ConditionTrue, Waited: true}, reason: "Reconciled",
		},
		{
			name:   "a Deployment of its name that it does not own: Failed",
			before: foreignDeployment,
			want:   reconciletest.Verdict{Status: kstatus.FailedStatus, Ready: metav1.ConditionFalse}, reason: "DeploymentNotOwned",
			event: &reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "DeploymentNotOwned"},
		},
		{
			name:   "pods the namespace refuses, past the Deployment's progress deadline: Failed",
			before: refusePods,
			then:   shortenProgressDeadline,
			want:   reconciletest.Verdict{Status: kstatus.FailedStatus, Ready: metav1.ConditionFalse}, reason: "ProgressDeadlineExceeded",
			event: &reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "ProgressDeadlineExceeded"},
		},
		{
			// kstatus looks at the deletion first. The Ready condition keeps the last
			// verdict, True, since the shell does not reconcile an object being deleted;
			// but the deletion made a new generation, which that verdict does not
			// describe, so kubectl wait does not return.
			name: "being deleted: Terminating",
			then: func(t *testing.T, e *env, mc *cachev1beta1.Memcached) {
				e.awaitAvailable(t, mc)
				e.holdDeletion(t, mc)
				if err := e.Delete(t.Context(), mc); err != nil {
					t.Fatal(err)
				}
			},
			want: reconciletest.Verdict{Status: kstatus.TerminatingStatus, Ready: metav1.ConditionTrue, Waited: false}, reason: "Reconciled",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.before != nil {
				tt.before(t, e)
			}
			e.Run(t)
			mc := e.create(t, "cache", 1)
			if tt.then != nil {
				tt.then(t, e, mc)
			}

			var got reconciletest.Verdict
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
					return err
				}
				got = reconciletest.VerdictOf(t, operator.Scheme, mc)
				// kstatus reads an object without a status as Current: wait for the
				// operator's verdict on this generation, except on a deletion, which no
				// one observes.
				unobserved := mc.Status.ObservedGeneration != mc.Generation && tt.want.Status != kstatus.TerminatingStatus
				if unobserved || got.Status != tt.want.Status {
					return fmt.Errorf("the verdict on generation %d is %s; want %s; status %+v", mc.Generation, got, tt.want.Status, mc.Status)
				}
				return nil
			})
			if got.Ready != tt.want.Ready || got.Waited != tt.want.Waited {
				t.Errorf("the verdict is %s; want %s", got, tt.want)
			}
			if ready := conditions.Find(mc, conditions.Ready); ready == nil || ready.Reason != tt.reason {
				t.Errorf("want Ready because %s; have %+v", tt.reason, ready)
			}
			if tt.event != nil {
				ev := e.AwaitEvent(t, mc, *tt.event)
				t.Logf("kstatus: %s; event: %s %s: %s", got, ev.Type, ev.Reason, ev.Note)
			}
		})
	}
}

func TestStatusIsInProgressWhileAMemcachedRollsOut(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := &cachev1beta1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "cache"},
		Spec:       cachev1beta1.MemcachedSpec{Replicas: 1},
	}

	t.Run("after it is created", func(t *testing.T) {
		versions := e.follow(t, mc, func() {
			if err := e.Create(t.Context(), mc); err != nil {
				t.Fatal(err)
			}
		}, convergedAtSize(1))

		// Even as created, before the operator has seen it, the Memcached reads as in
		// progress: its CRD defaults status.observedGeneration to 0, behind generation 1.
		expectInProgressUntilCurrent(t, versions)
	})

	t.Run("after it is resized up", func(t *testing.T) {
		versions := e.follow(t, mc, func() { e.resize(t, mc, 3) }, convergedAtSize(3))
		expectInProgressUntilCurrent(t, versions[1:]) // the first is the version before the resize
		if v := versions[len(versions)-1]; v.Status.ReadyReplicas != 3 {
			t.Errorf("Current with %d ready replicas; want 3", v.Status.ReadyReplicas)
		}
	})
}

func TestStatusIsInProgressUntilTheOperatorHasSeenANewSpec(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	mc := e.create(t, "cache", 1)
	e.awaitCurrent(t, mc)
	first.Stop()

	e.resize(t, mc, 2)
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(mc), mc); err != nil {
		t.Fatal(err)
	}
	// The Ready condition still says True, for the generation before; kubectl wait, like
	// kstatus, sees that it describes an older generation.
	want := reconciletest.Verdict{Status: kstatus.InProgressStatus, Ready: metav1.ConditionTrue, Waited: false}
	if v := reconciletest.VerdictOf(t, operator.Scheme, mc); v.Status != want.Status || v.Ready != want.Ready || v.Waited != want.Waited ||
		!strings.Contains(v.Message, "Memcached generation is 2, but latest observed generation is 1") {
		t.Errorf("with the operator stopped after a resize: %s; want %s, for an unobserved generation", v, want)
	}

	e.Run(t)
	e.awaitCurrent(t, mc)
	if *e.deployment(t, mc).Spec.Replicas != 2 {
		t.Errorf("the Deployment was not resized to 2")
	}
}

func TestStatusEventNamesTheDriftTheOperatorReverted(t *testing.T) {
	for _, drift := range []struct {
		field  string
		change func(*appsv1.Deployment)
		// path is how the event's note names the field.
		path string
	}{
		{"image", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "memcached:latest" }, "spec.template.spec.containers[0].image"},
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) }, "spec.replicas"},
	} {
		t.Run(drift.field, func(t *testing.T) {
			e := newEnv(t)
			e.Run(t)
			mc := e.create(t, "cache", 2)
			e.awaitAvailable(t, mc)

			e.drift(t, mc, drift.change)

			ev := e.AwaitEvent(t, mc, reconciletest.Event{Type: corev1.EventTypeNormal, Reason: "DriftReverted"})
			if !strings.Contains(ev.Note, drift.path) {
				t.Errorf("the DriftReverted event does not name %s: %q", drift.path, ev.Note)
			}
			t.Logf("event: %s", ev.Note)
		})
	}
}

func TestStatusEventNamesEveryDriftTheOperatorReverted(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := e.create(t, "cache", 2)
	e.awaitAvailable(t, mc)

	// One drift after another, each reverted before the next: a person reading the events
	// learns what was changed each time.
	e.drift(t, mc, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "memcached:latest" })
	e.awaitDriftReverted(t, mc, "spec.template.spec.containers[0].image")
	e.drift(t, mc, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) })
	e.awaitDriftReverted(t, mc, "spec.replicas")
}

func TestStatusOfAServingMemcachedStaysAvailableWhileItIsResized(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := e.create(t, "cache", 1)
	e.awaitCurrent(t, mc)

	// The Deployment reports itself below minimum availability while it scales up, for a
	// moment on simulated nodes. Whenever it does, the operator is made to reconcile: the
	// Memcached must stay Available whenever the operator happens to look.
	stopPoking := e.pokeWhileDeploymentUnavailable(t, mc)
	versions := e.follow(t, mc, func() { e.resize(t, mc, 3) }, convergedAtSize(3))
	pokes := stopPoking()

	var unavailable []*cachev1beta1.Memcached
	reconciling := false
	for _, v := range versions {
		if !conditions.IsTrue(v, conditions.Available) {
			unavailable = append(unavailable, v)
		}
		reconciling = reconciling || conditions.IsTrue(v, "Reconciling")
	}
	if len(unavailable) > 0 {
		v := unavailable[0]
		t.Errorf("%d of the %d versions during the resize are not Available, the first (generation %d, %d of %d ready): %+v",
			len(unavailable), len(versions), v.Generation, v.Status.ReadyReplicas, v.Spec.Replicas, conditions.Find(v, conditions.Available))
	}
	if !reconciling {
		t.Errorf("no version of the %d during the resize is Reconciling", len(versions))
	}
	t.Logf("the operator was made to reconcile %d times while the Deployment was below minimum availability", pokes)
}

func TestScaleSubresourceOfAMemcachedSizesItAndReportsItsPods(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := e.create(t, "cache", 1)
	e.awaitCurrent(t, mc)

	scale := e.scale(t, mc)
	scale.Spec.Replicas = 3
	if err := e.SubResource("scale").Update(t.Context(), mc, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	// The scale subresource is a view of spec.replicas: the size changes with it, at once.
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(mc), mc); err != nil {
		t.Fatal(err)
	}
	if mc.Spec.Replicas != 3 {
		t.Fatalf("scaled to 3; spec.replicas is %d", mc.Spec.Replicas)
	}
	dep := e.awaitAvailable(t, mc)
	if *dep.Spec.Replicas != 3 {
		t.Errorf("scaled to 3; the Deployment has %d replicas", *dep.Spec.Replicas)
	}

	// What kubectl scale and an autoscaler read back: the pods that exist, and how to find them.
	reconciletest.Eventually(t, func(context.Context) error {
		scale = e.scale(t, mc)
		if scale.Status.Replicas != 3 || scale.Status.Selector == "" {
			return fmt.Errorf("the scale reports %d replicas, selector %q; want 3 and a selector", scale.Status.Replicas, scale.Status.Selector)
		}
		return nil
	})
	selected, owned := e.podsSelectedBy(t, scale.Status.Selector), e.podsOf(t, dep)
	if len(selected) != 3 || !slices.Equal(selected, owned) {
		t.Errorf("the scale's selector %q selects pods %v; the Deployment's pods are %v", scale.Status.Selector, selected, owned)
	}

	// The schema bounds the size, and the API server holds the scale subresource to it.
	for _, refused := range []struct {
		replicas int32
		message  string
	}{
		{4, "spec.replicas: Invalid value: 4: spec.replicas in body should be less than or equal to 3"},
		{0, "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"},
	} {
		t.Run(fmt.Sprintf("to %d", refused.replicas), func(t *testing.T) {
			scale := e.scale(t, mc)
			scale.Spec.Replicas = refused.replicas
			err := e.SubResource("scale").Update(t.Context(), mc, client.WithSubResourceBody(scale))
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), refused.message) {
				t.Errorf("scaling to %d: %v; want Invalid: %s", refused.replicas, err, refused.message)
			}
			t.Logf("the API server says: %v", err)
			if got := e.scale(t, mc).Spec.Replicas; got != 3 {
				t.Errorf("after the refused scale, the size is %d; want 3", got)
			}
		})
	}
}

// converged reports whether a version of a Memcached is Ready for its own generation.
func converged(mc *cachev1beta1.Memcached) bool {
	return mc.Status.ObservedGeneration == mc.Generation && conditions.IsTrue(mc, conditions.Ready)
}

// convergedAtSize returns a test of whether a version of a Memcached has converged at size.
func convergedAtSize(size int32) func(*cachev1beta1.Memcached) bool {
	return func(mc *cachev1beta1.Memcached) bool { return mc.Spec.Replicas == size && converged(mc) }
}

// expectInProgressUntilCurrent checks the versions of a Memcached that a change went
// through, the last one Current: every one before is InProgress and kubectl wait does not
// return on it, and at least one is.
func expectInProgressUntilCurrent(t *testing.T, versions []*cachev1beta1.Memcached) {
	t.Helper()
	if len(versions) < 2 {
		t.Fatalf("%d versions: no InProgress one before Current", len(versions))
	}
	for i, mc := range versions {
		v, want := reconciletest.VerdictOf(t, operator.Scheme, mc), kstatus.InProgressStatus
		if i == len(versions)-1 {
			want = kstatus.CurrentStatus
		}
		if v.Status != want || v.Waited != (want == kstatus.CurrentStatus) {
			t.Errorf("version %d of %d (generation %d, observed %d): %s; want kstatus %s", i+1, len(versions), mc.Generation, mc.Status.ObservedGeneration, v, want)
		}
		t.Logf("version %d: %s", i+1, v)
	}
}

// follow watches the Memcached from before act until a version satisfies done, and
// returns the versions it saw: the first is the one before act, unless act creates it.
func (e *env) follow(t *testing.T, mc *cachev1beta1.Memcached, act func(), done func(*cachev1beta1.Memcached) bool) []*cachev1beta1.Memcached {
	t.Helper()
	watcher, err := client.NewWithWatch(operator.ControlPlane.Config, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(t.Context(), &cachev1beta1.MemcachedList{}, client.InNamespace(e.Namespace), client.MatchingFields{"metadata.name": mc.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	act()

	var versions []*cachev1beta1.Memcached
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended after %d versions", len(versions))
			}
			seen, ok := ev.Object.(*cachev1beta1.Memcached)
			if !ok {
				t.Fatalf("the watch said %s: %v", ev.Type, ev.Object)
			}
			versions = append(versions, seen)
			if done(seen) {
				return versions
			}
		case <-deadline:
			if len(versions) == 0 {
				t.Fatal("no version after 2 minutes")
			}
			t.Fatalf("no version is done after 2 minutes; the last of %d: %+v", len(versions), versions[len(versions)-1].Status)
		}
	}
}

// drift changes the Memcached's Deployment behind the operator's back.
func (e *env) drift(t *testing.T, mc *cachev1beta1.Memcached, change func(*appsv1.Deployment)) {
	t.Helper()
	dep := e.deployment(t, mc)
	before := dep.DeepCopy()
	change(dep)
	if err := e.Patch(t.Context(), dep, client.MergeFrom(before), client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
}

// awaitDriftReverted waits until an event on the Memcached says that the operator
// reverted the field at path of its Deployment.
func (e *env) awaitDriftReverted(t *testing.T, mc *cachev1beta1.Memcached, path string) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		var events eventsv1.EventList
		if err := e.List(ctx, &events, client.InNamespace(e.Namespace)); err != nil {
			return err
		}
		var notes []string
		for _, ev := range events.Items {
			if ev.Regarding.UID != mc.UID || ev.Reason != "DriftReverted" {
				continue
			}
			if strings.Contains(ev.Note, path) {
				return nil
			}
			series := int32(1)
			if ev.Series != nil {
				series = ev.Series.Count
			}
			notes = append(notes, fmt.Sprintf("%q (%d times)", ev.Note, series))
		}
		return fmt.Errorf("no DriftReverted event names %s; those there say %v", path, notes)
	})
}

// pokeWhileDeploymentUnavailable watches the Memcached's Deployment and, whenever a version
// of it is not Available, annotates the Memcached, which makes the operator reconcile it.
// It goes on until the function it returns is called (or the test ends); that function
// returns how many times it poked.
func (e *env) pokeWhileDeploymentUnavailable(t *testing.T, mc *cachev1beta1.Memcached) (stop func() int) {
	t.Helper()
	watcher, err := client.NewWithWatch(operator.ControlPlane.Config, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := watcher.Watch(ctx, &appsv1.DeploymentList{}, client.InNamespace(e.Namespace), client.MatchingFields{"metadata.name": mc.Name})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pokes, done := 0, make(chan error, 1)
	go func() {
		var failed error
		defer func() { done <- failed }()
		for ev := range w.ResultChan() {
			dep, ok := ev.Object.(*appsv1.Deployment)
			if !ok || deploymentAvailable(dep) {
				continue
			}
			poke := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"test/poke":%q}}}`, dep.ResourceVersion))
			target := &cachev1beta1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: mc.Namespace, Name: mc.Name}}
			if err := e.Patch(ctx, target, client.RawPatch(types.MergePatchType, poke)); err != nil {
				if ctx.Err() == nil && failed == nil {
					failed = err
				}
				continue
			}
			pokes++
		}
	}()
	var once sync.Once
	stop = func() int {
		once.Do(func() {
			cancel()
			w.Stop()
			if err := <-done; err != nil {
				t.Errorf("poking the Memcached: %v", err)
			}
		})
		return pokes
	}
	t.Cleanup(func() { stop() })
	return stop
}

// deploymentAvailable reports whether the Deployment's own Available condition is True.
func deploymentAvailable(dep *appsv1.Deployment) bool {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// awaitCurrent waits until kstatus reads the Memcached as Current for its generation and
// its Deployment's pods are all available.
func (e *env) awaitCurrent(t *testing.T, mc *cachev1beta1.Memcached) {
	t.Helper()
	e.awaitAvailable(t, mc)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if v := reconciletest.VerdictOf(t, operator.Scheme, mc); !converged(mc) || v.Status != kstatus.CurrentStatus {
			return fmt.Errorf("generation %d, observed %d: %s", mc.Generation, mc.Status.ObservedGeneration, v)
		}
		return nil
	})
}

// foreignDeployment creates a Deployment with the Memcached's name and no owner.
func foreignDeployment(t *testing.T, e *env) {
	dep := workload.Deployment(e.Namespace, "cache", 1, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "someone-elses"}},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	})
	if err := e.Create(t.Context(), dep); err != nil {
		t.Fatal(err)
	}
}

// refusePods makes the namespace refuse every pod, with a quota of none.
func refusePods(t *testing.T, e *env) {
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "no-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}
	if err := e.Create(t.Context(), quota); err != nil {
		t.Fatal(err)
	}
}

// shortenProgressDeadline sets the progress deadline of the Memcached's Deployment to a
// second, as an administrator would, under a field manager of its own: the operator does
// not set the field, so it keeps the administrator's value.
func shortenProgressDeadline(t *testing.T, e *env, mc *cachev1beta1.Memcached) {
	dep := &appsv1.Deployment{}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		return e.Get(ctx, client.ObjectKeyFromObject(mc), dep)
	})
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"progressDeadlineSeconds":1}}`))
	if err := e.Patch(t.Context(), dep, patch, client.FieldOwner("test")); err != nil {
		t.Fatal(err)
	}
}

// holdFinalizer is the test's own finalizer, which keeps a deleted object Terminating.
const holdFinalizer = "example.com/held-by-test"

// holdDeletion adds holdFinalizer to obj, and removes it when the test ends so that the
// namespace can go.
func (e *env) holdDeletion(t *testing.T, obj client.Object) {
	t.Helper()
	before := obj.DeepCopyObject().(client.Object)
	controllerutil.AddFinalizer(obj, holdFinalizer)
	if err := e.Patch(t.Context(), obj, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		err := e.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if err == nil {
			before := obj.DeepCopyObject().(client.Object)
			controllerutil.RemoveFinalizer(obj, holdFinalizer)
			err = e.Patch(ctx, obj, client.MergeFrom(before))
		}
		if client.IgnoreNotFound(err) != nil {
			t.Errorf("removing the finalizer %s: %v", holdFinalizer, err)
		}
	})
}

// deployment returns the Memcached's Deployment.
func (e *env) deployment(t *testing.T, mc *cachev1beta1.Memcached) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(mc), dep); err != nil {
		t.Fatal(err)
	}
	return dep
}

// scale reads the Memcached's scale subresource.
func (e *env) scale(t *testing.T, mc *cachev1beta1.Memcached) *autoscalingv1.Scale {
	t.Helper()
	scale := &autoscalingv1.Scale{}
	if err := e.SubResource("scale").Get(t.Context(), mc, scale); err != nil {
		t.Fatal(err)
	}
	return scale
}

// podsSelectedBy returns the names of the pods of the namespace that selector, in its
// string form, selects, sorted.
func (e *env) podsSelectedBy(t *testing.T, selector string) []string {
	t.Helper()
	s, err := labels.Parse(selector)
	if err != nil {
		t.Fatalf("selector %q: %v", selector, err)
	}
	var pods corev1.PodList
	if err := e.List(t.Context(), &pods, client.InNamespace(e.Namespace), client.MatchingLabelsSelector{Selector: s}); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// podsOf returns the names of the pods the Deployment selects, sorted.
func (e *env) podsOf(t *testing.T, dep *appsv1.Deployment) []string {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	return e.podsSelectedBy(t, s.String())
}
