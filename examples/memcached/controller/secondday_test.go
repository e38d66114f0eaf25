package controller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestMemcachedArgumentsFromAConfigMapRollTheDeploymentWhenTheyChange(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := &cachev1beta1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "cache"},
		Spec:       cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{ConfigMapRef: &cachev1beta1.ConfigMapReference{Name: "tuned"}}},
	}
	if err := e.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}

	// The ConfigMap does not exist yet: the Memcached says so and waits, then recovers by
	// itself when it appears.
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if d := conditions.Find(mc, conditions.Stalled); d == nil || d.Status != metav1.ConditionTrue || d.Reason != "ConfigMapNotFound" {
			return fmt.Errorf("want Stalled because ConfigMapNotFound, have %+v", mc.Status.Conditions)
		}
		return nil
	})
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "tuned", Labels: map[string]string{controller.ConfigMapLabel: ""}},
		Data:       map[string]string{"args": "-c 2048"},
	}
	if err := e.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	first := e.awaitArgs(t, mc, "-c", "2048")

	// A new value rolls the pods once; an unrelated ConfigMap changes nothing.
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "unrelated", Labels: cm.Labels}}
	if err := e.Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	cm.Data["args"] = "-c 4096"
	if err := e.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	second := e.awaitArgs(t, mc, "-c", "4096")
	if second.Generation != first.Generation+1 {
		t.Errorf("the Deployment went from generation %d to %d; want one rollout", first.Generation, second.Generation)
	}
	e.awaitAvailable(t, mc)
	if conditions.IsTrue(mc, conditions.Stalled) {
		t.Errorf("still Stalled once the ConfigMap exists: %+v", mc.Status.Conditions)
	}
}

// awaitArgs waits until mc's Deployment runs memcached with args last, and returns it.
func (e *env) awaitArgs(t *testing.T, mc *cachev1beta1.Memcached, args ...string) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), dep); err != nil {
			return err
		}
		if cmd := dep.Spec.Template.Spec.Containers[0].Command; len(cmd) < len(args) || !slices.Equal(cmd[len(cmd)-len(args):], args) {
			return fmt.Errorf("memcached runs %q; want it to end with %q", cmd, args)
		}
		return nil
	})
	return dep
}

func TestAPausedMemcachedLeavesItsDeploymentAloneUntilResumed(t *testing.T) {
	triggers := []struct {
		name   string
		pause  func(mc *cachev1beta1.Memcached, on bool)
		reason string
	}{
		{"paused by annotation", func(mc *cachev1beta1.Memcached, on bool) {
			if on {
				mc.Annotations = map[string]string{reconcile.PausedAnnotation: "true"}
			} else {
				delete(mc.Annotations, reconcile.PausedAnnotation)
			}
		}, reconcile.ReasonPausedByAnnotation},
		{"suspended in its spec", func(mc *cachev1beta1.Memcached, on bool) { mc.Spec.Suspend = on }, reconcile.ReasonSuspended},
	}
	for _, tt := range triggers {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.Run(t)
			mc := e.create(t, "cache", 1)
			e.awaitAvailable(t, mc)

			setPaused := func(paused bool) {
				t.Helper()
				before := mc.DeepCopy()
				tt.pause(mc, paused)
				if err := e.Patch(t.Context(), mc, client.MergeFrom(before)); err != nil {
					t.Fatal(err)
				}
			}
			setPaused(true)
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
					return err
				}
				if c := conditions.Find(mc, reconcile.Paused); c == nil || c.Status != metav1.ConditionTrue || c.Reason != tt.reason {
					return fmt.Errorf("not Paused because %s yet: %+v", tt.reason, mc.Status.Conditions)
				}
				return nil
			})

			// Someone else changes the image: a paused Memcached does not revert it.
			dep := &appsv1.Deployment{}
			if err := e.Get(t.Context(), client.ObjectKeyFromObject(mc), dep); err != nil {
				t.Fatal(err)
			}
			before := dep.DeepCopy()
			const theirs = "memcached:latest"
			dep.Spec.Template.Spec.Containers[0].Image = theirs
			if err := e.Patch(t.Context(), dep, client.MergeFrom(before), client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second) // longer than the coalescing delay of the Deployment's events
			if err := e.Get(t.Context(), client.ObjectKeyFromObject(dep), dep); err != nil {
				t.Fatal(err)
			}
			if image := dep.Spec.Template.Spec.Containers[0].Image; image != theirs {
				t.Errorf("the paused Memcached's Deployment runs %s; want the other writer's change kept", image)
			}

			// Resumed, it catches up.
			setPaused(false)
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
					return err
				}
				if image := dep.Spec.Template.Spec.Containers[0].Image; image != controller.Image {
					return fmt.Errorf("the Deployment still runs %s", image)
				}
				return nil
			})
		})
	}
}

func TestAMemcachedReconciledOnRequestSaysSoInOneStatusWrite(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := e.create(t, "cache", 1)
	e.awaitConverged(t, mc)

	for _, value := range []string{"1764000000", "1764000060"} {
		statusWrites := e.Requests.Count("patch", "memcacheds/status")
		before := mc.DeepCopy()
		mc.Annotations = map[string]string{reconcile.RequestedAtAnnotation: value}
		if err := e.Patch(t.Context(), mc, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		reconciletest.Eventually(t, func(ctx context.Context) error {
			if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
				return err
			}
			if got := mc.Status.LastHandledReconcileAt; got != value {
				return fmt.Errorf("lastHandledReconcileAt %q, want %q", got, value)
			}
			return nil
		})
		if n := e.Requests.Count("patch", "memcacheds/status") - statusWrites; n != 1 {
			t.Errorf("the request %s cost %d status writes, want 1:\n%s", value, n, &e.Requests)
		}
	}
}
