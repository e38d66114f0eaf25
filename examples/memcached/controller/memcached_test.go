package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

func TestMemcachedListensOnItsContainerPort(t *testing.T) {
	for _, port := range []int32{11211, 11300} {
		mc := &cachev1beta1.Memcached{Spec: cachev1beta1.MemcachedSpec{Replicas: 1, Server: cachev1beta1.MemcachedServer{Port: port}}}
		c := controller.Deployment(mc).Spec.Template.Spec.Containers[0]
		if i := slices.Index(c.Command, "-p"); i < 0 || i+1 == len(c.Command) || c.Command[i+1] != strconv.Itoa(int(port)) || c.Ports[0].ContainerPort != port {
			t.Errorf("port %d: memcached runs %q and declares port %d; want it to listen on %d", port, c.Command, c.Ports[0].ContainerPort, port)
		}
	}
}

func TestMemcachedRevertsDriftInItsDeployment(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := e.create(t, "cache", 2)
	e.awaitAvailable(t, mc)

	for _, drift := range []struct {
		field  string
		change func(*corev1.PodSpec, *int32)
	}{
		{"image", func(p *corev1.PodSpec, _ *int32) { p.Containers[0].Image = "memcached:latest" }},
		{"replicas", func(_ *corev1.PodSpec, replicas *int32) { *replicas = 3 }},
		{"port", func(p *corev1.PodSpec, _ *int32) { p.Containers[0].Ports[0].ContainerPort = 11212 }},
	} {
		t.Run(drift.field, func(t *testing.T) {
			dep := &appsv1.Deployment{}
			if err := e.Get(t.Context(), client.ObjectKeyFromObject(mc), dep); err != nil {
				t.Fatal(err)
			}
			before := dep.DeepCopy()
			drift.change(&dep.Spec.Template.Spec, dep.Spec.Replicas)
			if err := e.Patch(t.Context(), dep, client.MergeFrom(before), client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(mc), dep); err != nil {
					return err
				}
				if c := dep.Spec.Template.Spec.Containers[0]; c.Image != controller.Image || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 11211 || *dep.Spec.Replicas != 2 {
					return fmt.Errorf("drift kept: %s on ports %+v, %d replicas", c.Image, c.Ports, *dep.Spec.Replicas)
				}
				return nil
			})
			e.awaitAvailable(t, mc)
		})
	}
}

func TestDeletingAMemcachedGarbageCollectsItsDeployment(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	mc := e.create(t, "cache", 1)
	e.awaitAvailable(t, mc)

	if err := e.Delete(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		err := e.Get(ctx, client.ObjectKeyFromObject(mc), &appsv1.Deployment{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the Deployment is still there (%v)", err)
	})
}

func TestAConvergedMemcachedMakesNoWritesWhenReconciledAgain(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	mc := e.create(t, "cache", 3)
	e.awaitAvailable(t, mc)
	// Available comes as soon as the pods serve; Ready once the rollout is complete too.
	e.awaitConverged(t, mc)
	first.Stop()

	// A restart reconciles every object again, over a cache filled from scratch.
	reconciletest.ExpectNoWrites(t, &e.Requests, func() {
		e.Run(t).AwaitReconciles("memcached", 1)
	})
	t.Logf("requests of the restarted operator until it had reconciled the Memcached again:\n%s", &e.Requests)
}

func TestASpecItsSchemaRefusesIsReportedStalledAndNotApplied(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	mc := e.create(t, "sessions", 2)
	e.awaitConverged(t, mc)

	for _, tt := range []struct {
		name   string
		stored func(spec map[string]any)
		// message is what Stalled's message names.
		message string
	}{
		{"more replicas than the schema's maximum", func(spec map[string]any) { spec["replicas"] = int64(controller.MaxReplicas + 1) }, "spec.replicas 4"},
		{"no replicas, read as 0", func(spec map[string]any) { delete(spec, "replicas") }, "spec.replicas 0"},
		{"a port above the schema's maximum", func(spec map[string]any) {
			spec["replicas"] = int64(2)
			spec["server"] = map[string]any{"port": int64(controller.MaxPort + 1)}
		}, "spec.server.port 65536"},
		{"a memory limit below the schema's minimum", func(spec map[string]any) {
			spec["server"] = map[string]any{"memoryLimitMiB": int64(controller.MinMemoryLimitMiB - 1)}
		}, "spec.server.memoryLimitMiB 15"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			generation := e.StorePastSchema(t, mc, tt.stored) // as the API server would refuse it
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
					return err
				}
				if v := reconciletest.VerdictOf(t, operator.Scheme, mc); mc.Generation != generation || mc.Status.ObservedGeneration != generation || v.Status != kstatus.FailedStatus {
					return fmt.Errorf("generation %d, observed %d: %s", mc.Generation, mc.Status.ObservedGeneration, v)
				}
				return nil
			})
			if stalled := conditions.Find(mc, conditions.Stalled); stalled == nil || stalled.Reason != controller.ReasonInvalidSpec || !strings.Contains(stalled.Message, tt.message) {
				t.Errorf("Stalled is %+v; want reason %s, naming %s", stalled, controller.ReasonInvalidSpec, tt.message)
			}
			dep := &appsv1.Deployment{}
			if err := e.Get(t.Context(), client.ObjectKeyFromObject(mc), dep); err != nil {
				t.Fatal(err)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			if r := *dep.Spec.Replicas; r != 2 || c.Ports[0].ContainerPort != cachev1beta1.DefaultPort || !slices.Contains(c.Command, "-m=64") {
				t.Errorf("the Deployment has %d replicas, port %d, command %q; want the 2 replicas, port %d and 64 MiB of the last valid spec",
					r, c.Ports[0].ContainerPort, c.Command, cachev1beta1.DefaultPort)
			}
		})
	}

	// Reported once, then left alone: reconciling it again writes nothing, and asks for
	// no retry.
	first.Stop()
	reconciletest.ExpectNoWrites(t, &e.Requests, func() {
		e.Run(t).AwaitReconciles("memcached", 1)
	})

	// A valid spec again, it converges again.
	before := mc.DeepCopy()
	mc.Spec.Replicas, mc.Spec.Server = 2, cachev1beta1.MemcachedServer{}
	if err := e.Patch(t.Context(), mc, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	e.awaitConverged(t, mc)
}

// create creates a Memcached of the given size in the test's namespace.
func (e *env) create(t *testing.T, name string, size int32) *cachev1beta1.Memcached {
	t.Helper()
	mc := &cachev1beta1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: name},
		Spec:       cachev1beta1.MemcachedSpec{Replicas: size},
	}
	if err := e.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

// resize sets the Memcached's size.
func (e *env) resize(t *testing.T, mc *cachev1beta1.Memcached, size int32) {
	t.Helper()
	before := mc.DeepCopy()
	mc.Spec.Replicas = size
	if err := e.Patch(t.Context(), mc, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// awaitAvailable waits until the Memcached reports Available for its current spec and
// its Deployment has as many available replicas as that spec asks for, and returns the
// Deployment.
func (e *env) awaitAvailable(t *testing.T, mc *cachev1beta1.Memcached) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), dep); err != nil {
			return err
		}
		switch available := conditions.Find(mc, conditions.Available); {
		case mc.Status.ObservedGeneration != mc.Generation:
			return fmt.Errorf("the status describes generation %d of %d", mc.Status.ObservedGeneration, mc.Generation)
		case available == nil || available.Status != metav1.ConditionTrue:
			return fmt.Errorf("not Available: %+v", available)
		case dep.Status.AvailableReplicas != mc.Spec.Replicas:
			return fmt.Errorf("%d of %d replicas available", dep.Status.AvailableReplicas, mc.Spec.Replicas)
		}
		return nil
	})
	return dep
}

// awaitConverged waits until the Memcached is Ready for its own generation, and reads it
// into mc.
func (e *env) awaitConverged(t *testing.T, mc *cachev1beta1.Memcached) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(mc), mc); err != nil {
			return err
		}
		if !converged(mc) {
			return fmt.Errorf("not converged: %+v", mc.Status.Conditions)
		}
		return nil
	})
}
