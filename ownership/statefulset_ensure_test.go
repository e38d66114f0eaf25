package ownership_test

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// TestEnsureLeavesClaimTemplatesItCannotChange changes the claim templates of a StatefulSet
// that exists, which the API server refuses, together with its image, which it allows, its
// pod template mounting each desired claim: the image is applied, unless it mounts a claim
// the live templates lack, the templates are left as they are and reported, and the next
// Ensure of the same desired object sends nothing when it applied.
func TestEnsureLeavesClaimTemplatesItCannotChange(t *testing.T) {
	data := workload.ClaimTemplate("data", resource.MustParse("1Gi"))
	logs := workload.ClaimTemplate("logs", resource.MustParse("1Gi"))
	tests := []struct {
		name   string
		claims []corev1.PersistentVolumeClaim
		diff   string // what the error's Diff says; empty for no error
		// refused says that the API server refuses the rest without the new claims.
		refused bool
	}{
		{"a larger claim", []corev1.PersistentVolumeClaim{workload.ClaimTemplate("data", resource.MustParse("2Gi"))},
			"spec.volumeClaimTemplates[0].spec.resources.requests[storage]: 1Gi → 2Gi", false},
		{"another storage class", []corev1.PersistentVolumeClaim{func() corev1.PersistentVolumeClaim {
			c := data
			c.Spec.StorageClassName = ptr.To("fast")
			return c
		}()}, `spec.volumeClaimTemplates[0].spec.storageClassName: <unset> → "fast"`, false},
		{"a claim added", []corev1.PersistentVolumeClaim{data, logs}, "spec.volumeClaimTemplates: [data] → [data logs]", true},
		{"the claim removed", nil, "spec.volumeClaimTemplates: [data] → []", false},
		{"the same claim, the API server's defaults left out", []corev1.PersistentVolumeClaim{data}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, counter, owner := clustertest.Setup(t, cp(t))
			w := ownership.NewTestWriter(c)
			tpl := clustertest.PodTemplate()
			tpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			if _, _, err := ownership.Ensure(t.Context(), w, owner, workload.StatefulSet(owner.Namespace, "db", 2, tpl, data)); err != nil {
				t.Fatal(err)
			}

			tpl.Spec.Containers[0].Image = "busybox:2"
			tpl.Spec.Containers[0].VolumeMounts = nil
			for _, claim := range tt.claims {
				tpl.Spec.Containers[0].VolumeMounts = append(tpl.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: claim.Name, MountPath: "/" + claim.Name})
			}
			desired := workload.StatefulSet(owner.Namespace, "db", 2, tpl, tt.claims...)
			counter.Reset()
			live, result, err := ownership.Ensure(t.Context(), w, owner, desired)
			var immutable *ownership.ImmutableError
			switch {
			case tt.diff == "" && err != nil:
				t.Fatalf("Ensure: %v, want no error", err)
			case tt.diff != "" && !errors.As(err, &immutable):
				t.Fatalf("Ensure: %v, want an ImmutableError", err)
			case tt.diff != "" && (!ownership.IsImmutable(err) || strings.Join(immutable.Diff, "\n") != tt.diff || immutable.Field != "spec.volumeClaimTemplates"):
				t.Errorf("ImmutableError = %+v, want field spec.volumeClaimTemplates and diff %q", immutable, tt.diff)
			}
			if tt.refused {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `"logs"`) {
					t.Errorf("Ensure: %v, want the API server's refusal of the mount of logs joined", err)
				}
				tpl.Spec.Containers[0].Image = "busybox" // as it was
			} else if result.Action != ownership.Updated || live.Spec.Template.Spec.Containers[0].Image != "busybox:2" {
				t.Errorf("Ensure = %s with image %s, want the new image applied", result.Action, live.Spec.Template.Spec.Containers[0].Image)
			}
			stored := &appsv1.StatefulSet{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(desired), stored); err != nil {
				t.Fatal(err)
			}
			if claims := stored.Spec.VolumeClaimTemplates; len(claims) != 1 || claims[0].Name != "data" || claims[0].Spec.Resources.Requests.Storage().String() != "1Gi" {
				t.Errorf("stored claim templates = %+v, want data of 1Gi as created", claims)
			}
			if image := stored.Spec.Template.Spec.Containers[0].Image; image != tpl.Spec.Containers[0].Image {
				t.Errorf("stored image = %s, want %s", image, tpl.Spec.Containers[0].Image)
			}
			if tt.refused {
				return
			}
			if n := counter.Count("patch", "statefulsets"); n > 2 {
				t.Errorf("%d patches to apply one change, want the apply and at most the hand-over of the created fields", n)
			}

			// The same desired object again: nothing to send, the same report.
			reconciletest.ExpectNoWrites(t, counter, func() {
				_, again, err := ownership.Ensure(t.Context(), w, owner, desired)
				if again.Action != ownership.Unchanged || (err == nil) != (tt.diff == "") || err != nil && err.Error() != immutable.Error() {
					t.Errorf("Ensure again = %s, %v; want Unchanged and the same error", again.Action, err)
				}
			})
		})
	}
}

// TestEnsureOfAStatefulOperatorsChildrenConverges ensures what a stateful operator owns, as
// the builders make it, twice: the second time, with the API server's defaults in every
// object (a StatefulSet's policies, its claims' volumeMode, a Service's IP families), sends
// nothing.
func TestEnsureOfAStatefulOperatorsChildrenConverges(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	w := ownership.NewTestWriter(c)
	ns := owner.Namespace
	tpl := clustertest.PodTemplate()
	tpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	children := []client.Object{
		workload.HeadlessService(ns, "db", tpl.Labels, corev1.ServicePort{Name: "peer", Port: 1234}),
		workload.PodDisruptionBudget(ns, "db", intstr.FromInt32(2), tpl.Labels),
		workload.StatefulSet(ns, "db", 3, tpl, workload.ClaimTemplate("data", resource.MustParse("1Gi"))),
	}
	for _, child := range children {
		if _, result, err := ownership.Ensure(t.Context(), w, owner, child); err != nil || result.Action != ownership.Created {
			t.Fatalf("Ensure %T = %s, %v; want Created", child, result.Action, err)
		}
	}
	reconciletest.ExpectNoWrites(t, counter, func() {
		for _, child := range children {
			if _, result, err := ownership.Ensure(t.Context(), w, owner, child); err != nil || result.Action != ownership.Unchanged {
				t.Errorf("Ensure %T again = %s, %v (%s); want Unchanged", child, result.Action, err, result.Diff)
			}
		}
	})
}
