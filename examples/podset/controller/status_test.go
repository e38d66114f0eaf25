package controller_test

// What standard clients read from a PodSet: kstatus' verdict (the library Flux and
// cli-utils compute status with), the condition `kubectl wait --for=condition=Ready`
// waits for, the events on the PodSet, and its scale subresource.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/reconcilekit/reconcilekit/conditions"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestStatusOfAPodSetAsStandardClientsReadIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before makes what exists in the namespace before the PodSet.
		before func(t *testing.T, e *env)
		// then happens to the PodSet once it exists.
		then func(t *testing.T, e *env, ps *appsv1alpha1.PodSet)
		// want is the verdict the PodSet settles at, with its Ready condition's reason.
		want   reconciletest.Verdict
		reason string
		// event is the event recorded on the PodSet on its way there, if any.
		event *reconciletest.Event
		// check checks what else the PodSet's verdict comes with, if anything.
		check func(t *testing.T, e *env, ps *appsv1alpha1.PodSet)
	}{
		{
			name: "converged: Current, and Ready",
			want: reconciletest.Verdict{Status: kstatus.CurrentStatus, Ready: metav1.ConditionTrue, Waited: true}, reason: "Reconciled",
		},
		{
			name:   "a Deployment of its name that it does not own: Failed",
			before: createForeignDeployment,
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
			name: "a size its schema refuses, stored past the API server: Failed, its Deployment left as it was",
			then: func(t *testing.T, e *env, ps *appsv1alpha1.PodSet) {
				e.awaitReady(t, ps)
				// Past the API server, whose schema would refuse it.
				e.StorePastSchema(t, ps, func(spec map[string]any) { spec["size"] = int64(controller.MaxSize + 1) })
			},
			check: func(t *testing.T, e *env, ps *appsv1alpha1.PodSet) {
				if r := *e.deployment(t, ps).Spec.Replicas; r != 1 {
					t.Errorf("the Deployment has %d replicas; want the 1 of the last valid spec", r)
				}
			},
			want: reconciletest.Verdict{Status: kstatus.FailedStatus, Ready: metav1.ConditionFalse}, reason: "InvalidSpec",
			event: &reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "InvalidSpec"},
		},
		{
			// kstatus looks at the deletion first. The Ready condition keeps the last
			// verdict, True, since the shell does not reconcile an object being deleted;
			// but the deletion made a new generation, which that verdict does not
			// describe, so kubectl wait does not return.
			name: "being deleted: Terminating",
			then: func(t *testing.T, e *env, ps *appsv1alpha1.PodSet) {
				e.awaitReady(t, ps)
				e.holdDeletion(t, ps)
				if err := e.Delete(t.Context(), ps); err != nil {
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
			ps := e.create(t, "web", 1)
			if tt.then != nil {
				tt.then(t, e, ps)
			}

			var got reconciletest.Verdict
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(ps), ps); err != nil {
					return err
				}
				got = reconciletest.VerdictOf(t, operator.Scheme, ps)
				// kstatus reads an object without a status as Current: wait for the
				// operator's verdict on this generation, except on a deletion, which no
				// one observes.
				unobserved := ps.Status.ObservedGeneration != ps.Generation && tt.want.Status != kstatus.TerminatingStatus
				if unobserved || got.Status != tt.want.Status {
					return fmt.Errorf("the verdict on generation %d is %s; want %s; status %+v", ps.Generation, got, tt.want.Status, ps.Status)
				}
				return nil
			})
			if got.Ready != tt.want.Ready || got.Waited != tt.want.Waited {
				t.Errorf("the verdict is %s; want %s", got, tt.want)
			}
			if ready := conditions.Find(ps, conditions.Ready); ready == nil || ready.Reason != tt.reason {
				t.Errorf("want Ready because %s; have %+v", tt.reason, ready)
			}
			if tt.event != nil {
				ev := e.AwaitEvent(t, ps, *tt.event)
				t.Logf("kstatus: %s; event: %s %s: %s", got, ev.Type, ev.Reason, ev.Note)
			}
			if tt.check != nil {
				tt.check(t, e, ps)
			}
		})
	}
}

func TestStatusIsInProgressWhileAPodSetRollsOut(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "web"},
		Spec:       appsv1alpha1.PodSetSpec{Size: 1},
	}

	t.Run("after it is created", func(t *testing.T) {
		versions := e.follow(t, ps, func() {
			if err := e.Create(t.Context(), ps); err != nil {
				t.Fatal(err)
			}
		}, convergedAtSize(1))

		// Even as created, before the operator has seen it, the PodSet reads as in
		// progress: its CRD defaults status.observedGeneration to 0, behind generation 1.
		expectInProgressUntilCurrent(t, versions)
	})

	t.Run("after it is resized up", func(t *testing.T) {
		versions := e.follow(t, ps, func() { e.resize(t, ps, 3) }, convergedAtSize(3))
		expectInProgressUntilCurrent(t, versions[1:]) // the first is the version before the resize
		if v := versions[len(versions)-1]; v.Status.ReadyReplicas != 3 {
			t.Errorf("Current with %d ready replicas; want 3", v.Status.ReadyReplicas)
		}
	})
}

func TestStatusIsInProgressUntilTheOperatorHasSeenANewSpec(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	ps := e.create(t, "web", 1)
	e.awaitCurrent(t, ps)
	first.Stop()

	e.resize(t, ps, 2)
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(ps), ps); err != nil {
		t.Fatal(err)
	}
	// The Ready condition still says True, for the generation before; kubectl wait, like
	// kstatus, sees that it describes an older generation.
	want := reconciletest.Verdict{Status: kstatus.InProgressStatus, Ready: metav1.ConditionTrue, Waited: false}
	if v := reconciletest.VerdictOf(t, operator.Scheme, ps); v.Status != want.Status || v.Ready != want.Ready || v.Waited != want.Waited ||
		!strings.Contains(v.Message, "PodSet generation is 2, but latest observed generation is 1") {
		t.Errorf("with the operator stopped after a resize: %s; want %s, for an unobserved generation", v, want)
	}

	e.Run(t)
	e.awaitCurrent(t, ps)
	if *e.deployment(t, ps).Spec.Replicas != 2 {
		t.Errorf("the Deployment was not resized to 2")
	}
}

func TestScaleSubresourceOfAPodSetSizesItAndReportsItsPods(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	ps := e.create(t, "web", 1)
	e.awaitCurrent(t, ps)

	scale := e.scale(t, ps)
	scale.Spec.Replicas = 3
	if err := e.SubResource("scale").Update(t.Context(), ps, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	// The scale subresource is a view of spec.size: the size changes with it, at once.
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(ps), ps); err != nil {
		t.Fatal(err)
	}
	if ps.Spec.Size != 3 {
		t.Fatalf("scaled to 3; spec.size is %d", ps.Spec.Size)
	}
	e.awaitReady(t, ps)
	dep := e.deployment(t, ps)
	if *dep.Spec.Replicas != 3 {
		t.Errorf("scaled to 3; the Deployment has %d replicas", *dep.Spec.Replicas)
	}

	// What kubectl scale and an autoscaler read back: the pods that exist, and how to find them.
	reconciletest.Eventually(t, func(context.Context) error {
		scale = e.scale(t, ps)
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
		{101, "spec.size: Invalid value: 101: spec.size in body should be less than or equal to 100"},
		{-1, "spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"},
	} {
		t.Run(fmt.Sprintf("to %d", refused.replicas), func(t *testing.T) {
			scale := e.scale(t, ps)
			scale.Spec.Replicas = refused.replicas
			err := e.SubResource("scale").Update(t.Context(), ps, client.WithSubResourceBody(scale))
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), refused.message) {
				t.Errorf("scaling to %d: %v; want Invalid: %s", refused.replicas, err, refused.message)
			}
			t.Logf("the API server says: %v", err)
			if got := e.scale(t, ps).Spec.Replicas; got != 3 {
				t.Errorf("after the refused scale, the size is %d; want 3", got)
			}
		})
	}
}

// converged reports whether a version of a PodSet is Ready for its own generation.
func converged(ps *appsv1alpha1.PodSet) bool {
	return ps.Status.ObservedGeneration == ps.Generation && conditions.IsTrue(ps, conditions.Ready)
}

// convergedAtSize returns a test of whether a version of a PodSet has converged at size.
func convergedAtSize(size int32) func(*appsv1alpha1.PodSet) bool {
	return func(ps *appsv1alpha1.PodSet) bool { return ps.Spec.Size == size && converged(ps) }
}

// expectInProgressUntilCurrent checks the versions of a PodSet that a change went
// through, the last one Current: every one before is InProgress and kubectl wait does not
// return on it, and at least one is.
func expectInProgressUntilCurrent(t *testing.T, versions []*appsv1alpha1.PodSet) {
	t.Helper()
	if len(versions) < 2 {
		t.Fatalf("%d versions: no InProgress one before Current", len(versions))
	}
	for i, ps := range versions {
		v, want := reconciletest.VerdictOf(t, operator.Scheme, ps), kstatus.InProgressStatus
		if i == len(versions)-1 {
			want = kstatus.CurrentStatus
		}
		if v.Status != want || v.Waited != (want == kstatus.CurrentStatus) {
			t.Errorf("version %d of %d (generation %d, observed %d): %s; want kstatus %s", i+1, len(versions), ps.Generation, ps.Status.ObservedGeneration, v, want)
		}
		t.Logf("version %d: %s", i+1, v)
	}
}

// follow watches the PodSet from before act until a version satisfies done, and
// returns the versions it saw: the first is the one before act, unless act creates it.
func (e *env) follow(t *testing.T, ps *appsv1alpha1.PodSet, act func(), done func(*appsv1alpha1.PodSet) bool) []*appsv1alpha1.PodSet {
	t.Helper()
	watcher, err := client.NewWithWatch(operator.ControlPlane.Config, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(t.Context(), &appsv1alpha1.PodSetList{}, client.InNamespace(e.Namespace), client.MatchingFields{"metadata.name": ps.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	act()

	var versions []*appsv1alpha1.PodSet
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended after %d versions", len(versions))
			}
			seen, ok := ev.Object.(*appsv1alpha1.PodSet)
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

// resize sets the PodSet's size.
func (e *env) resize(t *testing.T, ps *appsv1alpha1.PodSet, size int32) {
	t.Helper()
	before := ps.DeepCopy()
	ps.Spec.Size = size
	if err := e.Patch(t.Context(), ps, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// awaitCurrent waits until kstatus reads the PodSet as Current for its generation and
// its Deployment's pods are all available.
func (e *env) awaitCurrent(t *testing.T, ps *appsv1alpha1.PodSet) {
	t.Helper()
	e.awaitReady(t, ps)
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(ps), ps); err != nil {
			return err
		}
		if v := reconciletest.VerdictOf(t, operator.Scheme, ps); !converged(ps) || v.Status != kstatus.CurrentStatus {
			return fmt.Errorf("generation %d, observed %d: %s", ps.Generation, ps.Status.ObservedGeneration, v)
		}
		return nil
	})
}

// createForeignDeployment creates a Deployment with the PodSet's name and no owner.
func createForeignDeployment(t *testing.T, e *env) {
	dep := foreignDeployment(nil)
	dep.Namespace = e.Namespace
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

// shortenProgressDeadline sets the progress deadline of the PodSet's Deployment to a
// second, as an administrator would, under a field manager of its own: the operator does
// not set the field, so it keeps the administrator's value.
func shortenProgressDeadline(t *testing.T, e *env, ps *appsv1alpha1.PodSet) {
	dep := &appsv1.Deployment{}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		return e.Get(ctx, client.ObjectKeyFromObject(ps), dep)
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

// deployment returns the PodSet's Deployment.
func (e *env) deployment(t *testing.T, ps *appsv1alpha1.PodSet) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(ps), dep); err != nil {
		t.Fatal(err)
	}
	return dep
}

// scale reads the PodSet's scale subresource.
func (e *env) scale(t *testing.T, ps *appsv1alpha1.PodSet) *autoscalingv1.Scale {
	t.Helper()
	scale := &autoscalingv1.Scale{}
	if err := e.SubResource("scale").Get(t.Context(), ps, scale); err != nil {
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
