package ownership_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/internal/clustertest"
	"github.com/reconcilekit/reconcilekit/internal/fight"
	"github.com/reconcilekit/reconcilekit/internal/telemetry"
	"github.com/reconcilekit/reconcilekit/ownership"
)

// fighter returns a second writer that sets the Deployment's replicas to n with a forced
// server-side apply under a field manager of its own, as a misconfigured autoscaler or
// another controller would.
func fighter(t *testing.T, c client.Client, live *appsv1.Deployment, n int32) {
	t.Helper()
	replicas := appsv1ac.Deployment(live.Name, live.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(n))
	if err := c.Apply(t.Context(), replicas, client.FieldOwner("replica-fighter"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureDetectsAFightOverAFieldItSetsAndBacksOff(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	recorder := events.NewFakeRecorder(10)
	w := ownership.NewTestWriter(c)
	w.Recorder = recorder
	live, _ := ensure(t, c, owner, clustertest.Deployment(owner))
	fightsBefore := testutil.ToFloat64(telemetry.Fights.WithLabelValues("Deployment", telemetry.Update))

	// The fighter resets the replicas before every Ensure, as fast as it can, for 20 rounds.
	const rounds = 20
	var writes, detectedAt int
	var fighting *ownership.FightingError
	for round := 1; round <= rounds; round++ {
		fighter(t, c, live, 5)
		counter.Reset()
		_, _, err := ownership.Ensure(t.Context(), w, owner, clustertest.Deployment(owner))
		writes += counter.Count("patch", "deployments")
		switch {
		case ownership.IsFighting(err):
			if detectedAt == 0 {
				detectedAt = round
				errors.As(err, &fighting)
			}
		case err != nil:
			t.Fatalf("round %d: Ensure: %v", round, err)
		}
	}
	t.Logf("fight detected at write %d; %d applies in %d rounds of the fighter's writes", detectedAt, writes, rounds)
	if detectedAt == 0 || detectedAt > fight.Reverts {
		t.Fatalf("fight detected at round %d, want within %d writes", detectedAt, fight.Reverts)
	}
	if writes > fight.Reverts {
		t.Errorf("Ensure applied %d times against the fighter, want at most %d: it must back off, not feed the fight", writes, fight.Reverts)
	}
	if !ownership.IsFighting(fighting) || len(fighting.Managers) != 1 || fighting.Managers[0] != "replica-fighter" ||
		!strings.Contains(strings.Join(fighting.Fields, "\n"), "spec.replicas: 5 → 2") || fighting.RetryAfter <= 0 {
		t.Errorf("FightingError = %+v, want the other manager, the field and a back-off", fighting)
	}
	if d, ok := ownership.FightBackoff(fighting); !ok || d != fighting.RetryAfter {
		t.Errorf("FightBackoff = %v, %v, want %v", d, ok, fighting.RetryAfter)
	}
	if got := testutil.ToFloat64(telemetry.Fights.WithLabelValues("Deployment", telemetry.Update)) - fightsBefore; got != 1 {
		t.Errorf("reconcilekit_fights_total grew by %v, want 1", got)
	}
	var warned bool
	for _, e := range drain(recorder) {
		warned = warned || (strings.HasPrefix(e, "Warning Fighting") && strings.Contains(e, "replica-fighter") && strings.Contains(e, "spec.replicas"))
	}
	if !warned {
		t.Error("no Warning Fighting event naming the other manager and the field on the owner")
	}
}

func TestEnsureRaisesNoAlarmWhenTheDesiredObjectChanges(t *testing.T) {
	tests := []struct {
		name   string
		change func(d *appsv1.Deployment, round int)
	}{
		{name: "a resize", change: func(d *appsv1.Deployment, round int) { d.Spec.Replicas = new(int32(1 + round%3)) }},
		{name: "a rollout of a new image", change: func(d *appsv1.Deployment, round int) {
			d.Spec.Template.Spec.Containers[0].Image = []string{"busybox:1.36", "busybox:1.37"}[round%2]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, owner := clustertest.Setup(t, cp(t))
			for round := range 10 {
				d := clustertest.Deployment(owner)
				tt.change(d, round)
				if _, _, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(c), owner, d); err != nil {
					t.Fatalf("round %d: Ensure: %v", round, err)
				}
			}
		})
	}
}

func TestEnsureRaisesNoAlarmWhenSomeoneChangesAFieldTwice(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	live, _ := ensure(t, c, owner, clustertest.Deployment(owner))
	for range fight.Reverts - 1 {
		fighter(t, c, live, 5)
		if _, _, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(c), owner, clustertest.Deployment(owner)); err != nil {
			t.Fatalf("Ensure: %v, want two reverts of a person's change without an alarm", err)
		}
	}
}

// laggingDeployments is a client whose cache has not yet seen the latest writes to one
// Deployment: typed reads of it answer it as it was when the cache froze, as an informer
// whose watch lags does. Uncached reads (unstructured) and all writes go to the API server.
type laggingDeployments struct {
	client.Client
	frozen *appsv1.Deployment
}

func (c laggingDeployments) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if d, ok := obj.(*appsv1.Deployment); ok && key == client.ObjectKeyFromObject(c.frozen) {
		c.frozen.DeepCopyInto(d)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func TestEnsureRaisesNoAlarmWhenItsCacheLagsBehindItsOwnWrite(t *testing.T) {
	c, counter, owner := clustertest.Setup(t, cp(t))
	live, _ := ensure(t, c, owner, clustertest.Deployment(owner))
	// Someone scales the child once; the cache sees that, then lags while Ensure puts the
	// replicas back and is called again and again, as under a busy informer.
	fighter(t, c, live, 5)
	stale := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(live), stale); err != nil {
		t.Fatal(err)
	}
	lagging := laggingDeployments{Client: c, frozen: stale}
	counter.Reset()
	for round := 1; round <= 10; round++ {
		if _, _, err := ownership.Ensure(t.Context(), ownership.NewTestWriter(lagging), owner, clustertest.Deployment(owner)); err != nil {
			t.Fatalf("round %d: Ensure: %v; want no fight: nobody has undone Ensure's write since", round, err)
		}
	}
	if got := counter.Count("patch", "deployments"); got >= fight.Reverts {
		t.Errorf("Ensure applied %d times, want fewer than %d: once the API server is read to already hold the desired object, the stale cache is no reason to write", got, fight.Reverts)
	}
	fresh := &appsv1.Deployment{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(live), fresh); err != nil || *fresh.Spec.Replicas != 2 {
		t.Errorf("the child has %v replicas (%v), want the desired 2", fresh.Spec.Replicas, err)
	}
}

func TestEnsureDetectsAWebhookThatRewritesWhatItApplies(t *testing.T) {
	c, _, owner := clustertest.Setup(t, cp(t))
	// A mutating admission webhook of a registry policy: every image sent is rewritten on
	// the way in, so the stored object never has the desired image and every apply
	// changes nothing.
	const rewritten = "registry.local/busybox"
	hook := cp(t).MutatingWebhook(t, owner.Namespace, appsv1.SchemeGroupVersion.WithResource("deployments"), func(obj map[string]any) {
		for _, c := range nested(obj, "spec", "template", "spec")["containers"].([]any) {
			c.(map[string]any)["image"] = rewritten
		}
	})
	var err error
	var round int
	for round = 1; round <= 5 && !ownership.IsFighting(err); round++ {
		_, _, err = ownership.Ensure(t.Context(), ownership.NewTestWriter(c), owner, clustertest.Deployment(owner))
	}
	var f *ownership.FightingError
	if !errors.As(err, &f) || !f.NoOp || len(f.Managers) != 0 || !f.Admission {
		t.Fatalf("after %d Ensures: %v, want a fight over writes that change nothing, undone on admission", round-1, err)
	}
	t.Logf("detected after %d applies (%d admitted by the webhook): %v", f.Writes, hook.Admitted(), f)
	// The first apply changes the object all the same: it makes Ensure's field manager the
	// owner of the fields it applies. The ones after it change nothing.
	if f.Writes > fight.NoOps+1 {
		t.Errorf("detected after %d writes, want %d", f.Writes, fight.NoOps+1)
	}
	if !strings.Contains(f.Error(), rewritten) || !strings.Contains(f.Error(), ownership.TestFieldOwner) {
		t.Errorf("the error says %q; want the field rewritten and the field manager the rewrite is recorded under", f)
	}
}

// nested returns the object at path in obj.
func nested(obj map[string]any, path ...string) map[string]any {
	for _, p := range path {
		obj = obj[p].(map[string]any)
	}
	return obj
}

func drain(r *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-r.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}
