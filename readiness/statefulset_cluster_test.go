package readiness_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/readiness"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// TestStatefulSetServesThroughARollingUpdate rolls a StatefulSet of 3 to a new image and then
// to pods that cannot be scheduled, on a cluster of simulated nodes, and reads
// StatefulSet on every version of it the StatefulSet controller writes: Available
// stays True while the minimum of pods are ready (a majority, or the budget's minAvailable),
// and turns False when the budget asks for every pod.
func TestStatefulSetServesThroughARollingUpdate(t *testing.T) {
	cluster := reconciletest.StartCluster(t, 2)
	tests := []struct {
		name         string
		minAvailable *intstr.IntOrString // of a PodDisruptionBudget, none when nil
		serves       bool                // with one pod down, as a rolling update takes it
	}{
		{"without a budget, a majority serves", nil, true},
		{"a budget's minAvailable of 2 serves", ptr.To(intstr.FromInt32(2)), true},
		{"a budget's minAvailable of every pod does not", ptr.To(intstr.FromString("100%")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.NewWithWatch(cluster.Config, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ns := cluster.RestrictedNamespace(t)
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
			create(t, c, owner)
			w := clustertest.Writer(c)
			labels := map[string]string{"app": "db"}
			var pdb *policyv1.PodDisruptionBudget
			if tt.minAvailable != nil {
				if pdb, _, err = ownership.Ensure(t.Context(), w, owner, workload.PodDisruptionBudget(ns, "db", *tt.minAvailable, labels)); err != nil {
					t.Fatal(err)
				}
			}
			events, err := c.Watch(t.Context(), &appsv1.StatefulSetList{}, client.InNamespace(ns))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(events.Stop)
			// ensure ensures the StatefulSet with pods of image and returns its generation.
			ensure := func(image string, nodeSelector map[string]string) int64 {
				t.Helper()
				tpl := restrictedTemplate(labels, corev1.RestartPolicyAlways)
				tpl.Spec.Containers[0].Image, tpl.Spec.NodeSelector = image, nodeSelector
				live, _, err := ownership.Ensure(t.Context(), w, owner, workload.StatefulSet(ns, "db", 3, tpl))
				if err != nil {
					t.Fatal(err)
				}
				return live.Generation
			}
			complete := func(s *appsv1.StatefulSet, r readiness.State) bool { return r.Rollout == readiness.RolloutComplete }

			ensure("registry.invalid/app:1", nil)
			follow(t, events, pdb, func(*appsv1.StatefulSet, readiness.State) error { return nil }, complete)

			// A new image: one pod at a time is replaced.
			generation := ensure("registry.invalid/app:2", nil)
			var unavailable []string
			follow(t, events, pdb, func(s *appsv1.StatefulSet, r readiness.State) error {
				if !r.Available {
					unavailable = append(unavailable, r.AvailableMessage)
				}
				if tt.serves && !r.Available {
					return fmt.Errorf("not available during a rolling update: %s", r.AvailableMessage)
				}
				return nil
			}, func(s *appsv1.StatefulSet, r readiness.State) bool {
				return complete(s, r) && s.Status.CurrentRevision == s.Status.UpdateRevision && s.Generation == generation
			})
			if !tt.serves && len(unavailable) == 0 {
				t.Error("available at every step of the rolling update, though the budget asks for every pod")
			}

			// A template whose pods cannot be scheduled: the last pod is replaced and its
			// successor waits, the two others serve.
			generation = ensure("registry.invalid/app:3", nowhere)
			stuck := follow(t, events, pdb, func(*appsv1.StatefulSet, readiness.State) error { return nil },
				func(s *appsv1.StatefulSet, r readiness.State) bool {
					return s.Generation == generation && s.Status.ObservedGeneration == generation && s.Status.UpdatedReplicas == 1 && s.Status.ReadyReplicas == 2
				})
			if r := readiness.StatefulSet(stuck, pdb); r.Available != tt.serves || r.Rollout != readiness.RolloutInProgress {
				t.Errorf("stuck on an unschedulable pod: %+v, want available %t and in progress", r, tt.serves)
			}
		})
	}
}

// follow reads the versions of the StatefulSet the watch delivers, checks the readiness of
// each, and returns the first that is done, within a minute.
func follow(t *testing.T, events watch.Interface, pdb *policyv1.PodDisruptionBudget,
	check func(*appsv1.StatefulSet, readiness.State) error, done func(*appsv1.StatefulSet, readiness.State) bool,
) *appsv1.StatefulSet {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var last string
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("the StatefulSet did not reach its state; last seen: %s", last)
		case e, ok := <-events.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			s, ok := e.Object.(*appsv1.StatefulSet)
			if !ok {
				continue
			}
			r := readiness.StatefulSet(s, pdb)
			last = fmt.Sprintf("generation %d, status %+v: %+v", s.Generation, s.Status, r)
			t.Logf("generation %d, %d ready, %d updated: available %t (%s), %s (%s)",
				s.Generation, s.Status.ReadyReplicas, s.Status.UpdatedReplicas, r.Available, r.AvailableMessage, r.Rollout, r.Message)
			if err := check(s, r); err != nil {
				t.Error(err)
			}
			if done(s, r) {
				return s
			}
		}
	}
}
