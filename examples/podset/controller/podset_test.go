package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	appsv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/podset/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

func TestPodSetListsItsRunningPodsSortedWithTheirReadyCount(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	ps := e.create(t, "web", 2)
	e.awaitReady(t, ps)

	dep := &appsv1.Deployment{}
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(ps), dep); err != nil {
		t.Fatal(err)
	}
	if !ownership.IsControlledBy(dep, ps) {
		t.Errorf("the Deployment is not controlled by the PodSet: %+v", dep.OwnerReferences)
	}
	if c := dep.Spec.Template.Spec.Containers[0]; c.Image != controller.Image || c.Ports[0].ContainerPort != 1234 {
		t.Errorf("the Deployment runs %s on port %d; want %s on port 1234", c.Image, c.Ports[0].ContainerPort, controller.Image)
	}
}

func TestPodSetScalesItsPodsToItsSize(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	ps := e.create(t, "web", 2)
	for _, size := range []int32{2, 3, 1, 0} {
		before := ps.DeepCopy()
		ps.Spec.Size = size
		if err := e.Patch(t.Context(), ps, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		e.awaitReady(t, ps)
	}
}

func TestPodSetRevertsDriftInItsDeployment(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	ps := e.create(t, "web", 2)
	e.awaitReady(t, ps)

	for _, drift := range []struct {
		field  string
		change func(*corev1.PodSpec, *int32)
	}{
		{"image", func(p *corev1.PodSpec, _ *int32) { p.Containers[0].Image = "busybox:latest" }},
		{"replicas", func(_ *corev1.PodSpec, replicas *int32) { *replicas = 4 }},
		{"port", func(p *corev1.PodSpec, _ *int32) { p.Containers[0].Ports[0].ContainerPort = 1235 }},
	} {
		t.Run(drift.field, func(t *testing.T) {
			dep := &appsv1.Deployment{}
			if err := e.Get(t.Context(), client.ObjectKeyFromObject(ps), dep); err != nil {
				t.Fatal(err)
			}
			before := dep.DeepCopy()
			drift.change(&dep.Spec.Template.Spec, dep.Spec.Replicas)
			if err := e.Patch(t.Context(), dep, client.MergeFrom(before), client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(ps), dep); err != nil {
					return err
				}
				if c := dep.Spec.Template.Spec.Containers[0]; c.Image != controller.Image || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 1234 || *dep.Spec.Replicas != 2 {
					return fmt.Errorf("drift kept: %s on ports %+v, %d replicas", c.Image, c.Ports, *dep.Spec.Replicas)
				}
				return nil
			})
			e.awaitReady(t, ps)
		})
	}
}

func TestDeletingAPodSetGarbageCollectsItsDeploymentAndPods(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	ps := e.create(t, "web", 2)
	e.awaitReady(t, ps)

	if err := e.Delete(t.Context(), ps); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		err := e.Get(ctx, client.ObjectKeyFromObject(ps), &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Deployment is still there (%v)", err)
		}
		if pods, err := e.pods(ctx, ps); err != nil || len(pods) > 0 {
			return fmt.Errorf("pods %v are still there (%v)", pods, err)
		}
		return nil
	})
}

func TestPodSetLeavesAForeignDeploymentAloneAndSaysWhy(t *testing.T) {
	for _, foreign := range []struct {
		name  string
		owner func(e *env, t *testing.T) []metav1.OwnerReference
	}{
		{"with no owner", func(*env, *testing.T) []metav1.OwnerReference { return nil }},
		{"controlled by another object", func(e *env, t *testing.T) []metav1.OwnerReference {
			other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "other"}}
			if err := e.Create(t.Context(), other); err != nil {
				t.Fatal(err)
			}
			return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: other.Name, UID: other.UID, Controller: ptr.To(true)}}
		}},
	} {
		t.Run(foreign.name, func(t *testing.T) {
			e := newEnv(t)
			labels := map[string]string{"app": "someone-elses"}
			dep := workload.Deployment(e.Namespace, "web", 1, corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
			})
			dep.OwnerReferences = foreign.owner(e, t)
			if err := e.Create(t.Context(), dep); err != nil {
				t.Fatal(err)
			}
			e.Run(t)
			ps := e.create(t, "web", 2)

			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(ps), ps); err != nil {
					return err
				}
				if s := conditions.Find(ps, conditions.Stalled); s == nil || s.Status != metav1.ConditionTrue || s.Reason != "DeploymentNotOwned" {
					return fmt.Errorf("want Stalled=True because DeploymentNotOwned, have %+v", ps.Status.Conditions)
				}
				return nil
			})
			t.Logf("the PodSet says: %s", conditions.Find(ps, conditions.Stalled).Message)

			live := &appsv1.Deployment{}
			if err := e.Get(t.Context(), client.ObjectKeyFromObject(dep), live); err != nil {
				t.Fatal(err)
			}
			if live.Generation != dep.Generation || ownership.IsControlledBy(live, ps) || live.Annotations[ownership.IntentAnnotation] != "" {
				t.Errorf("the foreign Deployment was touched: generation %d → %d, owners %+v, annotations %v",
					dep.Generation, live.Generation, live.OwnerReferences, live.Annotations)
			}
		})
	}
}

func TestPodSetRecordsAWarningEventWhenItsWorkFails(t *testing.T) {
	e := newEnv(t)
	// Every write of a Deployment fails, so the operator cannot do its work.
	e.Config = (&reconciletest.Faults{Verbs: []string{"create", "update", "patch"}, Resources: []string{"deployments"}, Rate: 1}).Wrap(e.Config)
	e.Run(t)
	ps := e.create(t, "web", 1)

	reconciletest.Eventually(t, func(ctx context.Context) error {
		var events eventsv1.EventList
		if err := e.List(ctx, &events, client.InNamespace(e.Namespace)); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.Regarding.UID == ps.UID && ev.Type == corev1.EventTypeWarning && ev.Reason == "ReconcileError" {
				t.Logf("event: %s", ev.Note)
				return nil
			}
		}
		return fmt.Errorf("no ReconcileError event regarding the PodSet among %d events", len(events.Items))
	})
}

func TestAConvergedPodSetMakesNoWritesWhenReconciledAgain(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	ps := e.create(t, "web", 3)
	e.awaitReady(t, ps)
	first.Stop()

	// A restart reconciles every object again, over a cache filled from scratch.
	reconciletest.ExpectNoWrites(t, &e.Requests, func() {
		e.Run(t).AwaitReconciles("podset", 1)
	})
	t.Logf("requests of the restarted operator until it had reconciled the PodSet again:\n%s", &e.Requests)
}

// create creates a PodSet of the given size in the test's namespace.
func (e *env) create(t *testing.T, name string, size int32) *appsv1alpha1.PodSet {
	t.Helper()
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: name},
		Spec:       appsv1alpha1.PodSetSpec{Size: size},
	}
	if err := e.Create(t.Context(), ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

// pods returns the names of the PodSet's pods that are not being deleted, sorted.
func (e *env) pods(ctx context.Context, ps *appsv1alpha1.PodSet) ([]string, error) {
	var pods corev1.PodList
	if err := e.List(ctx, &pods, client.InNamespace(ps.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": ps.Name}); err != nil {
		return nil, err
	}
	var names []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// awaitReady waits until the PodSet reports Available for its current spec, with as
// many ready replicas as that spec asks for and the names of exactly the pods that run.
func (e *env) awaitReady(t *testing.T, ps *appsv1alpha1.PodSet) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(ps), ps); err != nil {
			return err
		}
		pods, err := e.pods(ctx, ps)
		if err != nil {
			return err
		}
		switch available := conditions.Find(ps, conditions.Available); {
		case ps.Status.ObservedGeneration != ps.Generation:
			return fmt.Errorf("the status describes generation %d of %d", ps.Status.ObservedGeneration, ps.Generation)
		case available == nil || available.Status != metav1.ConditionTrue:
			return fmt.Errorf("not Available: %+v", available)
		case ps.Status.ReadyReplicas != ps.Spec.Size || len(pods) != int(ps.Spec.Size):
			return fmt.Errorf("%d ready replicas and %d pods; want %d", ps.Status.ReadyReplicas, len(pods), ps.Spec.Size)
		case !slices.Equal(ps.Status.PodNames, pods):
			return fmt.Errorf("the status lists pods %v; those that run are %v", ps.Status.PodNames, pods)
		}
		return nil
	})
}
