package ownership_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

// controlPlane is the package's, started by the first test that needs it.
var controlPlane clustertest.Lazy

// cp is the package's control plane; under -short it skips t.
func cp(t testing.TB) *reconciletest.ControlPlane { t.Helper(); return controlPlane.Get(t) }

func TestMain(m *testing.M) { os.Exit(controlPlane.Main(m)) }

func ensure(t *testing.T, c client.Client, owner client.Object, d *appsv1.Deployment, opts ...ownership.Option) (*appsv1.Deployment, ownership.Result) {
	t.Helper()
	live, result, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(c), owner, d, opts...)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return live, result
}

func TestEnsureCreatesAMissingObjectControlledByTheOwner(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	live, result := ensure(t, c, owner, clustertest.Deployment(owner))
	if result.Action != ownership.Created {
		t.Errorf("Action = %s, want Created", result.Action)
	}
	if !ownership.IsControlledBy(live, owner) || live.UID == "" {
		t.Errorf("the returned object is not the live one controlled by the owner: %+v", live.ObjectMeta)
	}
}

func TestEnsureWritesNothingWhenTheLiveObjectMatches(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	ensure(t, c, owner, clustertest.Deployment(owner))
	// The desired Deployment leaves every server default out; none may cause an update.
	reconciletest.ExpectNoWrites(t, counter, func() {
		for range 3 {
			if _, result := ensure(t, c, owner, clustertest.Deployment(owner)); result.Action != ownership.Unchanged {
				t.Errorf("Action = %s (%s), want Unchanged", result.Action, result.Diff)
			}
		}
	})
}

func TestEnsureRevertsDriftOnTheFieldsItSets(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	live, _ := ensure(t, c, owner, clustertest.Deployment(owner))
	live.Spec.Replicas = ptr.To[int32](5)
	live.Spec.Template.Spec.Containers[0].Image = "nginx"
	if err := c.Update(t.Context(), live, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	got, result := ensure(t, c, owner, clustertest.Deployment(owner))
	if result.Action != ownership.Updated || !strings.Contains(result.Diff, "spec.replicas: 5 → 2") || !strings.Contains(result.Diff, `image: "nginx" → "busybox"`) {
		t.Errorf("Ensure = %s with diff %q, want Updated naming replicas and image", result.Action, result.Diff)
	}
	if *got.Spec.Replicas != 2 || got.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Errorf("drift not reverted: replicas %d, image %s", *got.Spec.Replicas, got.Spec.Template.Spec.Containers[0].Image)
	}
}

func TestEnsureRevertsAChangedListKey(t *testing.T) {
	tests := map[string]string{"a named port": "http", "an unnamed port": ""}
	for name, portName := range tests {
		t.Run(name, func(t *testing.T) {
			c, _, owner := clustertest.Setup(t, cp(t))
			d := clustertest.Deployment(owner)
			d.Spec.Template.Spec.Containers[0].Ports[0].Name = portName
			live, _ := ensure(t, c, owner, d)
			// The port number is the key of its list element: changing it makes the element
			// the other manager's.
			live.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 1235
			if err := c.Update(t.Context(), live, client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			got, result := ensure(t, c, owner, d)
			ports := got.Spec.Template.Spec.Containers[0].Ports
			if result.Action != ownership.Updated || len(ports) != 1 || ports[0].ContainerPort != 1234 {
				t.Errorf("Ensure = %s, ports %+v; want Updated with port 1234 alone", result.Action, ports)
			}
		})
	}
}

func TestEnsureLeavesFieldsOthersSetAlone(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	live, _ := ensure(t, c, owner, clustertest.Deployment(owner))
	live.Annotations["team"] = "cache"
	live.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "DEBUG", Value: "1"}}
	if err := c.Update(t.Context(), live, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	got, result := ensure(t, c, owner, clustertest.Deployment(owner))
	if result.Action != ownership.Unchanged || counter.Writes() != 0 {
		t.Errorf("Ensure = %s after %d writes, want Unchanged with none", result.Action, counter.Writes())
	}
	if got.Annotations["team"] != "cache" || len(got.Spec.Template.Spec.Containers[0].Env) != 1 {
		t.Errorf("fields set by someone else were lost: %v %v", got.Annotations, got.Spec.Template.Spec.Containers[0].Env)
	}
}

func TestEnsureRemovesAFieldTheDesiredObjectNoLongerSets(t *testing.T) {
	// What happened to the object between its creation and the removal: each leaves the
	// fields with other owners (the create's update entry, an apply entry, a drift fixer).
	tests := map[string]func(t *testing.T, c client.Client, owner client.Object, withEnv *appsv1.Deployment){
		"right after the create": func(*testing.T, client.Client, client.Object, *appsv1.Deployment) {},
		"after a drift was reverted": func(t *testing.T, c client.Client, owner client.Object, withEnv *appsv1.Deployment) {
			live := &appsv1.Deployment{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(withEnv), live); err != nil {
				t.Fatal(err)
			}
			live.Spec.Replicas = ptr.To[int32](5)
			if err := c.Update(t.Context(), live, client.FieldOwner("someone-else")); err != nil {
				t.Fatal(err)
			}
			ensure(t, c, owner, withEnv)
		},
		"after another field was added": func(t *testing.T, c client.Client, owner client.Object, withEnv *appsv1.Deployment) {
			more := withEnv.DeepCopy()
			more.Labels = map[string]string{"tier": "gold"}
			ensure(t, c, owner, more)
		},
	}
	for name, before := range tests {
		t.Run(name, func(t *testing.T) {
			c, _, owner := clustertest.Setup(t, cp(t))
			withEnv := clustertest.Deployment(owner)
			withEnv.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
			withEnv.Annotations = map[string]string{"tier": "gold"}
			ensure(t, c, owner, withEnv)
			before(t, c, owner, withEnv)

			got, result := ensure(t, c, owner, clustertest.Deployment(owner))
			if result.Action != ownership.Updated {
				t.Errorf("Action = %s, want Updated", result.Action)
			}
			if env := got.Spec.Template.Spec.Containers[0].Env; len(env) != 0 || got.Annotations["tier"] != "" || got.Labels["tier"] != "" {
				t.Errorf("removed fields are still set: env %v, annotations %v, labels %v", env, got.Annotations, got.Labels)
			}
		})
	}
}

func TestEnsureRewritesNoChildWhoseIntentAnEarlierReleaseRecorded(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	created, _ := ensure(t, c, owner, clustertest.Deployment(owner))
	earlier, err := ownership.EarlierIntent(owner, clustertest.Deployment(owner))
	if err != nil {
		t.Fatal(err)
	}
	if earlier == created.Annotations[ownership.IntentAnnotation] {
		t.Fatalf("the earlier form of the intent is the current one, %s: nothing to test", earlier)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ownership.IntentAnnotation, earlier)
	if err := c.Patch(t.Context(), created, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}

	counter.Reset()
	if _, result := ensure(t, c, owner, clustertest.Deployment(owner)); result.Action != ownership.Unchanged || counter.Writes() != 0 {
		t.Errorf("Ensure %s in %d writes after an upgrade; want Unchanged in 0", result.Action, counter.Writes())
	}
	changed := clustertest.Deployment(owner)
	changed.Spec.Replicas = ptr.To[int32](3)
	got, result := ensure(t, c, owner, changed)
	if intent := got.Annotations[ownership.IntentAnnotation]; result.Action != ownership.Updated || intent == earlier {
		t.Errorf("a changed child: %s with intent %s; want Updated with the current form", result.Action, intent)
	}
}

func TestEnsureCreatesWithOneRequest(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	ensure(t, c, owner, clustertest.Deployment(owner))
	if counter.Writes() != 1 || counter.Count("create", "deployments") != 1 {
		t.Errorf("creating made these requests, want one create:\n%s", counter)
	}
}

func TestEnsureNeverTakesOverAnObjectItDoesNotControl(t *testing.T) {
	tests := map[string]func(owner *corev1.ConfigMap, d *appsv1.Deployment){
		"controlled by another owner": func(owner *corev1.ConfigMap, d *appsv1.Deployment) {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "other", UID: "4f0c4b2e-0000-4000-8000-000000000001", Controller: ptr.To(true)}}
		},
		"controlled by nothing": func(*corev1.ConfigMap, *appsv1.Deployment) {},
	}
	for name, foreign := range tests {
		t.Run(name, func(t *testing.T) {
			c, counter, owner := clustertest.Setup(t, cp(t))
			existing := clustertest.Deployment(owner)
			existing.Spec.Replicas = ptr.To[int32](1)
			foreign(owner, existing)
			if err := c.Create(t.Context(), existing); err != nil {
				t.Fatal(err)
			}
			counter.Reset()
			_, _, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(c), owner, clustertest.Deployment(owner))
			if !ownership.IsNotControlled(err) {
				t.Fatalf("Ensure error = %v, want a NotControlledError", err)
			}
			if counter.Writes() != 0 {
				t.Errorf("Ensure wrote to an object it does not control:\n%s", counter)
			}
		})
	}
}

func TestEnsureRefusesAnObjectItsCacheHasNotSeen(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	if err := c.Create(t.Context(), clustertest.Deployment(owner)); err != nil { // an orphan
		t.Fatal(err)
	}
	// A cache that lags, or is restricted by labels: typed reads miss the Deployment.
	stale := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*appsv1.Deployment); ok {
				return apierrors.NewNotFound(appsv1.Resource("deployments"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	orphan := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(clustertest.Deployment(owner)), orphan); err != nil {
		t.Fatal(err)
	}
	_, _, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(stale), owner, clustertest.Deployment(owner))
	if !ownership.IsNotControlled(err) {
		t.Errorf("Ensure error = %v, want a NotControlledError", err)
	}
	after := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(orphan), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != orphan.ResourceVersion {
		t.Errorf("Ensure changed an object its cache missed:\n%s", counter)
	}
}

func TestEnsureRefusesAnOwnerTheGarbageCollectorWouldBreak(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	d := clustertest.Deployment(owner)
	d.Namespace = "default"
	_, _, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(c), owner, d)
	if !ownership.IsInvalidOwner(err) || counter.Writes() != 0 {
		t.Errorf("Ensure error = %v after %d writes, want an InvalidOwnerError and none", err, counter.Writes())
	}
}

func TestEnsureCreateOnlyLeavesAnExistingObjectAsItIs(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	live, _ := ensure(t, c, owner, clustertest.Deployment(owner), ownership.CreateOnly())
	changed := clustertest.Deployment(owner)
	changed.Spec.Replicas = ptr.To[int32](3)
	counter.Reset()
	got, result := ensure(t, c, owner, changed, ownership.CreateOnly())
	if result.Action != ownership.Unchanged || counter.Writes() != 0 || *got.Spec.Replicas != *live.Spec.Replicas {
		t.Errorf("CreateOnly changed an existing object: %s, %d writes, replicas %d", result.Action, counter.Writes(), *got.Spec.Replicas)
	}
	// Nothing compares it again: a hash of it would only weigh on every cache that holds it.
	if intent, ok := got.Annotations[ownership.IntentAnnotation]; ok {
		t.Errorf("a create-only object carries %s %q", ownership.IntentAnnotation, intent)
	}
}

func TestEnsureLeavesAnAutoscalersReplicasAlone(t *testing.T) {
	scale := func(t *testing.T, c client.Client, live *appsv1.Deployment) {
		scale := &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Namespace: live.Namespace, Name: live.Name},
			Spec:       autoscalingv1.ScaleSpec{Replicas: 5},
		}
		if err := c.SubResource("scale").Update(t.Context(), live, client.WithSubResourceBody(scale), client.FieldOwner("autoscaler")); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(opts ...client.ApplyOption) func(t *testing.T, c client.Client, live *appsv1.Deployment) {
		return func(t *testing.T, c client.Client, live *appsv1.Deployment) {
			replicas := appsv1ac.Deployment(live.Name, live.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5))
			if err := c.Apply(t.Context(), replicas, append(opts, client.FieldOwner("autoscaler"))...); err != nil {
				t.Fatal(err)
			}
		}
	}
	update := func(t *testing.T, c client.Client, live *appsv1.Deployment) {
		live.Spec.Replicas = ptr.To[int32](5)
		if err := c.Update(t.Context(), live, client.FieldOwner("autoscaler")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// changed, when true, has Ensure create the Deployment from an older desired object
		// and then apply the current one, before the replicas are set.
		changed bool
		// resize sets spec.replicas to 5 as another field manager.
		resize func(t *testing.T, c client.Client, live *appsv1.Deployment)
	}{
		{name: "an update through the scale subresource, as a HorizontalPodAutoscaler makes it", resize: scale},
		{name: "an update", resize: update},
		// The plain create left the defaulted replicas owned by Ensure's field manager, like
		// every field of the object it created, so someone else's apply must force them.
		// Ensure never applies replicas, so it never takes them back.
		{name: "a forced server-side apply right after the create", resize: apply(client.ForceOwnership)},
		// Once Ensure has applied, it owns only what desired sets: no conflict.
		{name: "a server-side apply once Ensure has applied", changed: true, resize: apply()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, counter, owner := clustertest.Setup(t, cp(t))
			autoscaled := func() *appsv1.Deployment {
				return workload.AutoscaledDeployment(owner.GetNamespace(), "web", clustertest.PodTemplate())
			}
			first := autoscaled()
			if tt.changed {
				first.Annotations = map[string]string{"team": "web"}
			}
			live, result := ensure(t, c, owner, first)
			if result.Action != ownership.Created || *live.Spec.Replicas != 1 {
				t.Fatalf("Ensure = %s with %d replicas, want Created with the API server's default of 1", result.Action, *live.Spec.Replicas)
			}
			if tt.changed {
				live, _ = ensure(t, c, owner, autoscaled())
			}
			tt.resize(t, c, live)

			reconciletest.ExpectNoWrites(t, counter, func() {
				if _, result := ensure(t, c, owner, autoscaled()); result.Action != ownership.Unchanged {
					t.Errorf("Action = %s (%s), want Unchanged", result.Action, result.Diff)
				}
			})
			// A change of the operator's own is applied without taking the replicas back.
			changed := autoscaled()
			changed.Spec.Template.Spec.Containers[0].Image = "nginx"
			if _, result := ensure(t, c, owner, changed); result.Action != ownership.Updated || strings.Contains(result.Diff, "replicas") {
				t.Errorf("Ensure = %s with diff %q, want Updated without replicas", result.Action, result.Diff)
			}
			after := &appsv1.Deployment{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(live), after); err != nil {
				t.Fatal(err)
			}
			if *after.Spec.Replicas != 5 || after.Spec.Template.Spec.Containers[0].Image != "nginx" {
				t.Errorf("after Ensure: %d replicas, image %s; want the autoscaler's 5 and nginx", *after.Spec.Replicas, after.Spec.Template.Spec.Containers[0].Image)
			}
		})
	}
}
