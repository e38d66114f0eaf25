package controller_test

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
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/conditions"
	storev1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/examples/keyval/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/workload"
)

func TestKeyvalConvergesReadyWithItsClaimsBound(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	start := time.Now()
	kv := e.create(t, "sessions", 3)
	e.awaitConverged(t, kv)
	t.Logf("Ready %v after its creation", time.Since(start).Round(time.Millisecond))

	if v := reconciletest.VerdictOf(t, operator.Scheme, kv); v.Status != kstatus.CurrentStatus || !v.Waited {
		t.Errorf("converged, the verdict is %s; want Current, and kubectl wait returning", v)
	}
	if kv.Status.Replicas != 3 || kv.Status.ReadyReplicas != 3 {
		t.Errorf("status counts %d replicas, %d ready; want 3 and 3", kv.Status.Replicas, kv.Status.ReadyReplicas)
	}
	claims := e.claims(t, kv)
	if want := []string{"data-sessions-0", "data-sessions-1", "data-sessions-2"}; !slices.Equal(names(claims), want) {
		t.Errorf("claims %v; want %v", names(claims), want)
	}
	for _, c := range claims {
		if c.Status.Phase != corev1.ClaimBound || c.Spec.VolumeName == "" {
			t.Errorf("claim %s is %s, volume %q; want it Bound", c.Name, c.Status.Phase, c.Spec.VolumeName)
		}
	}

	headless, client_ := &corev1.Service{}, &corev1.Service{}
	e.get(t, kv.Name, headless)
	e.get(t, kv.Name+"-client", client_)
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || client_.Spec.ClusterIP == corev1.ClusterIPNone || client_.Spec.Ports[0].Port != controller.Port {
		t.Errorf("the headless Service has cluster IP %q, the client Service %q on port %d; want None, an address, and %d",
			headless.Spec.ClusterIP, client_.Spec.ClusterIP, client_.Spec.Ports[0].Port, controller.Port)
	}
	pdb := &policyv1.PodDisruptionBudget{}
	e.get(t, kv.Name, pdb)
	if pdb.Spec.MinAvailable.IntValue() != 2 {
		t.Errorf("the PodDisruptionBudget keeps %s; want 2 of 3", pdb.Spec.MinAvailable)
	}
	config := &corev1.ConfigMap{}
	e.get(t, kv.Name+"-config", config)
	if !strings.Contains(config.Data[controller.ConfigFile], "maxmemory 64mb\n") {
		t.Errorf("the configuration file lacks spec.config's directive:\n%s", config.Data[controller.ConfigFile])
	}
}

func TestAConvergedKeyvalMakesNoWritesWhenReconciledAgain(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	kv := e.create(t, "sessions", 3)
	e.awaitConverged(t, kv)
	first.Stop()

	// A restart reconciles every object again, over a cache filled from scratch.
	reconciletest.ExpectNoWrites(t, &e.Requests, func() {
		e.Run(t).AwaitReconciles("keyval", 1)
	})
	t.Logf("requests of the restarted operator until it had reconciled the Keyval again:\n%s", &e.Requests)
}

func TestAConfigChangeRollsEachServerExactlyOnce(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	kv := e.create(t, "sessions", 3)
	e.awaitConverged(t, kv)
	sts := e.statefulSet(t, kv)
	generation, hash := sts.Generation, sts.Spec.Template.Annotations[ownership.ConfigHashAnnotation]
	old := map[types.UID]bool{}
	for _, p := range e.pods(t, kv) {
		old[p.UID] = true
	}

	made := e.watchPods(t, kv)
	e.patch(t, kv, func(kv *storev1alpha1.Keyval) { kv.Spec.Config["maxmemory"] = "128mb" })
	e.awaitConverged(t, kv)

	// One change of the pod template, the config hash: one rollout, one new revision.
	sts = e.statefulSet(t, kv)
	if got := sts.Spec.Template.Annotations[ownership.ConfigHashAnnotation]; got == hash || sts.Generation != generation+1 {
		t.Errorf("the StatefulSet is at generation %d with config hash %s, from %d with %s; want one change", sts.Generation, got, generation, hash)
	}
	var revisions appsv1.ControllerRevisionList
	if err := e.List(t.Context(), &revisions, client.InNamespace(e.Namespace)); err != nil {
		t.Fatal(err)
	}
	if len(revisions.Items) != 2 || sts.Status.CurrentRevision != sts.Status.UpdateRevision {
		t.Errorf("%d revisions of the StatefulSet, current %s, update %s; want 2, the update's current",
			len(revisions.Items), sts.Status.CurrentRevision, sts.Status.UpdateRevision)
	}
	// The watch may lag the operator's cache: wait until it has seen every server run.
	servers := e.pods(t, kv)
	reconciletest.Eventually(t, func(context.Context) error {
		seen := made()
		for _, p := range servers {
			if !seen[p.UID].served() {
				return fmt.Errorf("the pods' watch has not seen %s run yet", p.Name)
			}
		}
		return nil
	})
	// Each server was replaced by one of the new revision that served, once. The
	// StatefulSet controller may make a pod of the old revision again in between, when its
	// own status is behind, and make a Pending pod again (kube-controller-manager's
	// business, not the operator's): those are counted apart.
	replaced, again := map[string]int{}, map[string][]podMade{}
	var all []podMade
	for uid, p := range made() {
		all = append(all, p)
		switch {
		case old[uid]:
		case p.revision == sts.Status.UpdateRevision && p.served():
			replaced[p.name]++
		default:
			again[p.name] = append(again[p.name], p)
		}
	}
	want := map[string]int{"sessions-0": 1, "sessions-1": 1, "sessions-2": 1}
	if fmt.Sprint(replaced) != fmt.Sprint(want) {
		t.Errorf("pods of the new revision made per server during the rollout: %v; want each once, %v; every pod seen: %v", replaced, want, all)
	}
	if len(again) > 0 {
		t.Logf("pods the StatefulSet controller made during the rollout that did not serve, or of the old revision: %v", again)
	}
	for _, p := range servers {
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision {
			t.Errorf("pod %s is of revision %s; want %s", p.Name, p.Labels[appsv1.ControllerRevisionHashLabelKey], sts.Status.UpdateRevision)
		}
	}
}

func TestAKeyvalIsAvailableThroughARollingUpdateWhileAQuorumServes(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	kv := e.create(t, "sessions", 3)
	e.awaitConverged(t, kv)

	// Pods are ready the moment they run on simulated nodes, so a quota holds the rolling
	// update with a server down: the StatefulSet controller deletes sessions-2 to replace
	// it and cannot create it again.
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}},
	}
	if err := e.Create(t.Context(), quota); err != nil {
		t.Fatal(err)
	}
	e.awaitQuota(t, quota)

	// Every version of the Keyval from the config change until it is not Available: while
	// one server is down it stays Available; once a second one is down as well, a majority
	// no longer serves, which it says at once.
	start := time.Now()
	versions := e.follow(t, kv, func() {
		e.patch(t, kv, func(kv *storev1alpha1.Keyval) { kv.Spec.Config["maxmemory"] = "128mb" })
		reconciletest.Eventually(t, func(ctx context.Context) error {
			sts := e.statefulSet(t, kv)
			if sts.Status.ObservedGeneration != sts.Generation || sts.Status.Replicas != 2 || sts.Status.ReadyReplicas != 2 {
				return fmt.Errorf("the StatefulSet has %d replicas, %d ready, generation %d observed %d; want a server down",
					sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Generation, sts.Status.ObservedGeneration)
			}
			return nil
		})
		t.Logf("one server down after %v", time.Since(start).Round(time.Millisecond))
		// A ready count alone changing is progress, which the shell writes within its
		// progress interval (reconcile.WithProgressInterval), 30 s: a restarted operator,
		// which has written nothing yet, writes what it reads at once.
		first.Stop()
		e.Run(t)
		reconciletest.Eventually(t, func(ctx context.Context) error {
			if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); err != nil {
				return err
			}
			if kv.Status.ReadyReplicas != 2 {
				return fmt.Errorf("the Keyval reports %d ready", kv.Status.ReadyReplicas)
			}
			return nil
		})
		before := quota.DeepCopy()
		quota.Spec.Hard[corev1.ResourcePods] = resource.MustParse("1")
		if err := e.Patch(t.Context(), quota, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		e.awaitQuota(t, quota)
		if err := e.Delete(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: "sessions-1"}}); err != nil {
			t.Fatal(err)
		}
	}, func(v *storev1alpha1.Keyval) bool { return conditions.IsFalse(v, conditions.Available) })

	var serving *storev1alpha1.Keyval // with a server down
	for _, v := range versions[:len(versions)-1] {
		if !conditions.IsTrue(v, conditions.Available) {
			t.Errorf("a version with a majority serving (generation %d, %d ready) is not Available: %+v",
				v.Generation, v.Status.ReadyReplicas, conditions.Find(v, conditions.Available))
		}
		if v.Status.ReadyReplicas == 2 && conditions.IsTrue(v, conditions.Reconciling) {
			serving = v
		}
	}
	if serving == nil {
		t.Fatalf("no version of the %d during the rolling update reports 2 servers ready, Reconciling", len(versions))
	}
	t.Logf("one server down: Available: %s; Reconciling: %s",
		conditions.Find(serving, conditions.Available).Message, conditions.Find(serving, conditions.Reconciling).Message)
	unavailable := versions[len(versions)-1]
	if c := conditions.Find(unavailable, conditions.Available); unavailable.Status.ReadyReplicas != 1 || c.Reason != "MinimumReplicasUnavailable" {
		t.Errorf("not Available with %d of 3 ready: %+v; want it once one alone is", unavailable.Status.ReadyReplicas, c)
	}
	t.Logf("two servers down after %v, %d versions: %s", time.Since(start).Round(time.Millisecond), len(versions),
		conditions.Find(unavailable, conditions.Available).Message)

	// The quota gone, the rolling update completes.
	if err := e.Delete(t.Context(), quota); err != nil {
		t.Fatal(err)
	}
	e.awaitConverged(t, kv)
	t.Logf("converged after %v", time.Since(start).Round(time.Millisecond))
}

func TestASuspendedKeyvalIsLeftAsItIsUntilItResumes(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	kv := e.create(t, "sessions", 2)
	e.awaitConverged(t, kv)
	hash := e.statefulSet(t, kv).Spec.Template.Annotations[ownership.ConfigHashAnnotation]

	e.patch(t, kv, func(kv *storev1alpha1.Keyval) { kv.Spec.Suspend, kv.Spec.Config["maxmemory"] = true, "128mb" })
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); err != nil {
			return err
		}
		if !conditions.IsTrue(kv, reconcile.Paused) {
			return fmt.Errorf("not Paused: %+v", kv.Status.Conditions)
		}
		return nil
	})
	if got := e.statefulSet(t, kv).Spec.Template.Annotations[ownership.ConfigHashAnnotation]; got != hash {
		t.Errorf("suspended, the servers were rolled to config %s", got)
	}

	e.patch(t, kv, func(kv *storev1alpha1.Keyval) { kv.Spec.Suspend = false })
	e.awaitConverged(t, kv)
	if got := e.statefulSet(t, kv).Spec.Template.Annotations[ownership.ConfigHashAnnotation]; got == hash {
		t.Errorf("resumed, the servers kept config %s", got)
	}
}

func TestAStorageChangeIsReportedNotFought(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	kv := e.create(t, "sessions", 2)
	e.awaitConverged(t, kv)

	e.patch(t, kv, func(kv *storev1alpha1.Keyval) { kv.Spec.Storage.Size = new(resource.MustParse("2Gi")) })
	var v reconciletest.Verdict
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); err != nil {
			return err
		}
		if v = reconciletest.VerdictOf(t, operator.Scheme, kv); kv.Status.ObservedGeneration != kv.Generation || v.Status != kstatus.FailedStatus {
			return fmt.Errorf("generation %d, observed %d: %s", kv.Generation, kv.Status.ObservedGeneration, v)
		}
		return nil
	})
	degraded := conditions.Find(kv, conditions.Degraded)
	if degraded == nil || degraded.Reason != "StorageUnchangeable" || !strings.Contains(degraded.Message, "--cascade=orphan") {
		t.Errorf("Degraded is %+v; want StorageUnchangeable, with the fix", degraded)
	}
	if !conditions.IsTrue(kv, conditions.Available) {
		t.Errorf("the servers serve, but the Keyval is not Available: %+v", conditions.Find(kv, conditions.Available))
	}
	if size := e.statefulSet(t, kv).Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; size.String() != "1Gi" {
		t.Errorf("the claim template asks for %s; want it left at 1Gi", size.String())
	}
	t.Logf("kstatus: %s; Degraded: %s", v, degraded.Message)

	// Reported once, then left alone: reconciling it again writes nothing, neither the
	// StatefulSet nor the status.
	first.Stop()
	reconciletest.ExpectNoWrites(t, &e.Requests, func() {
		e.Run(t).AwaitReconciles("keyval", 1)
	})

	// Back to the size its claims have, it is Ready again.
	e.patch(t, kv, func(kv *storev1alpha1.Keyval) { kv.Spec.Storage.Size = new(resource.MustParse("1Gi")) })
	e.awaitConverged(t, kv)
}

func TestScaleSubresourceOfAKeyvalScalesItsStatefulSet(t *testing.T) {
	e := newEnv(t)
	e.Run(t)
	kv := e.create(t, "sessions", 1)
	e.awaitConverged(t, kv)

	scale := e.scale(t, kv)
	scale.Spec.Replicas = 3
	if err := e.SubResource("scale").Update(t.Context(), kv, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	e.awaitConverged(t, kv)
	if kv.Spec.Replicas != 3 || *e.statefulSet(t, kv).Spec.Replicas != 3 {
		t.Fatalf("scaled to 3; spec.replicas is %d", kv.Spec.Replicas)
	}
	if claims := e.claims(t, kv); len(claims) != 3 {
		t.Errorf("scaled to 3, %d claims: %v", len(claims), names(claims))
	}
	pdb := &policyv1.PodDisruptionBudget{}
	e.get(t, kv.Name, pdb)
	if pdb.Spec.MinAvailable.IntValue() != 2 {
		t.Errorf("scaled to 3, the PodDisruptionBudget keeps %s; want 2", pdb.Spec.MinAvailable)
	}

	// What kubectl scale and an autoscaler read back: the servers that exist, and how to
	// find them.
	scale = e.scale(t, kv)
	selector, err := labels.Parse(scale.Status.Selector)
	if err != nil || scale.Status.Replicas != 3 {
		t.Fatalf("the scale reports %d replicas, selector %q (%v); want 3 and a selector", scale.Status.Replicas, scale.Status.Selector, err)
	}
	var pods corev1.PodList
	if err := e.List(t.Context(), &pods, client.InNamespace(e.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		t.Fatal(err)
	}
	if got := podNames(pods.Items); !slices.Equal(got, []string{"sessions-0", "sessions-1", "sessions-2"}) {
		t.Errorf("the scale's selector selects %v; want the three servers", got)
	}
}

func TestDeletingAKeyvalKeepsOrDeletesItsVolumesAsItsSpecSays(t *testing.T) {
	for _, tt := range []struct {
		whenDeleted storev1alpha1.ClaimRetention
		claimsLeft  int
		// sameData is whether a Keyval created again under the name finds the claims,
		// and the data, of the one deleted.
		sameData bool
	}{
		{storev1alpha1.Retain, 2, true},
		{storev1alpha1.Delete, 0, false},
	} {
		t.Run(string(tt.whenDeleted), func(t *testing.T) {
			e := newEnv(t)
			e.Run(t)
			kv := e.create(t, "sessions", 2, func(kv *storev1alpha1.Keyval) { kv.Spec.Storage.WhenDeleted = tt.whenDeleted })
			e.awaitConverged(t, kv)
			claims := e.claims(t, kv)
			if len(claims) != 2 {
				t.Fatalf("before the deletion, claims %v; want 2", names(claims))
			}

			start := time.Now()
			if err := e.Delete(t.Context(), kv); err != nil {
				t.Fatal(err)
			}
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); !apierrors.IsNotFound(err) {
					return fmt.Errorf("the Keyval is still there (%v)", err)
				}
				return nil
			})
			// Gone: the claims it was to take with it went first.
			if claims := e.claims(t, kv); len(claims) != tt.claimsLeft {
				t.Errorf("once the Keyval is gone, claims %v are left; want %d", names(claims), tt.claimsLeft)
			}
			t.Logf("the Keyval was gone %v after its deletion", time.Since(start).Round(time.Millisecond))

			again := e.create(t, "sessions", 2)
			e.awaitConverged(t, again)
			for i, c := range e.claims(t, again) {
				if same := c.UID == claims[i].UID; same != tt.sameData || c.Status.Phase != corev1.ClaimBound {
					t.Errorf("created again, claim %s is %s, the one before: %t; want the one before: %t", c.Name, c.Status.Phase, same, tt.sameData)
				}
			}
		})
	}
}

func TestASpecItsSchemaRefusesIsReportedStalledAndNotApplied(t *testing.T) {
	e := newEnv(t)
	first := e.Run(t)
	kv := e.create(t, "sessions", 2)
	e.awaitConverged(t, kv)

	for _, tt := range []struct {
		name   string
		stored func(spec map[string]any)
		// message is what Stalled's message names.
		message string
	}{
		{"more replicas than the schema's maximum", func(spec map[string]any) { spec["replicas"] = int64(controller.MaxReplicas + 1) }, "spec.replicas 6"},
		{"no replicas, read as 0", func(spec map[string]any) { delete(spec, "replicas") }, "spec.replicas 0"},
		{"a retention outside the schema's enum", func(spec map[string]any) {
			spec["replicas"] = int64(2)
			spec["storage"] = map[string]any{"whenDeleted": "Never", "size": "1Gi"}
		}, `spec.storage.whenDeleted "Never"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			generation := e.StorePastSchema(t, kv, tt.stored) // as the API server would refuse it
			reconciletest.Eventually(t, func(ctx context.Context) error {
				if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); err != nil {
					return err
				}
				if v := reconciletest.VerdictOf(t, operator.Scheme, kv); kv.Generation != generation || kv.Status.ObservedGeneration != generation || v.Status != kstatus.FailedStatus {
					return fmt.Errorf("generation %d, observed %d: %s", kv.Generation, kv.Status.ObservedGeneration, v)
				}
				return nil
			})
			if stalled := conditions.Find(kv, conditions.Stalled); stalled == nil || stalled.Reason != controller.ReasonInvalidSpec || !strings.Contains(stalled.Message, tt.message) {
				t.Errorf("Stalled is %+v; want reason %s, naming %s", stalled, controller.ReasonInvalidSpec, tt.message)
			}
			if r := *e.statefulSet(t, kv).Spec.Replicas; r != 2 {
				t.Errorf("the StatefulSet has %d replicas; want the 2 of the last valid spec", r)
			}
		})
	}

	// Reported once, then left alone: reconciling it again writes nothing, and asks for
	// no retry.
	first.Stop()
	reconciletest.ExpectNoWrites(t, &e.Requests, func() {
		e.Run(t).AwaitReconciles("keyval", 1)
	})

	// A valid spec again, it converges again.
	e.patch(t, kv, func(kv *storev1alpha1.Keyval) {
		kv.Spec.Replicas, kv.Spec.Storage.WhenDeleted = 2, storev1alpha1.Retain
	})
	e.awaitConverged(t, kv)
}

func TestStatusOfAKeyvalBlockedByAForeignStatefulSetIsFailed(t *testing.T) {
	e := newEnv(t)
	foreign := workload.StatefulSet(e.Namespace, "sessions", 1, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "someone-elses"}},
		Spec:       workload.Restricted(corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/app:1"}}}, 1000),
	})
	if err := e.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	e.Run(t)
	kv := e.create(t, "sessions", 1)

	var v reconciletest.Verdict
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); err != nil {
			return err
		}
		if v = reconciletest.VerdictOf(t, operator.Scheme, kv); kv.Status.ObservedGeneration != kv.Generation || v.Status != kstatus.FailedStatus {
			return fmt.Errorf("generation %d, observed %d: %s", kv.Generation, kv.Status.ObservedGeneration, v)
		}
		return nil
	})
	if ready := conditions.Find(kv, conditions.Ready); ready == nil || ready.Reason != "StatefulSetNotOwned" {
		t.Errorf("want Ready False because StatefulSetNotOwned; have %+v", ready)
	}
	ev := e.AwaitEvent(t, kv, reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "StatefulSetNotOwned"})
	t.Logf("kstatus: %s; event: %s", v, ev.Note)
}

// create creates a Keyval of the given replicas in the test's namespace, with a
// directive of configuration, changed by each of change.
func (e *env) create(t *testing.T, name string, replicas int32, change ...func(*storev1alpha1.Keyval)) *storev1alpha1.Keyval {
	t.Helper()
	kv := &storev1alpha1.Keyval{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: name},
		Spec:       storev1alpha1.KeyvalSpec{Replicas: replicas, Config: map[string]string{"maxmemory": "64mb"}},
	}
	for _, c := range change {
		c(kv)
	}
	if err := e.Create(t.Context(), kv); err != nil {
		t.Fatal(err)
	}
	return kv
}

// patch changes the Keyval's spec.
func (e *env) patch(t *testing.T, kv *storev1alpha1.Keyval, change func(*storev1alpha1.Keyval)) {
	t.Helper()
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(kv), kv); err != nil {
		t.Fatal(err)
	}
	before := kv.DeepCopy()
	change(kv)
	if err := e.Patch(t.Context(), kv, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// converged reports whether a version of a Keyval is Ready for its own generation.
func converged(kv *storev1alpha1.Keyval) bool {
	return kv.Status.ObservedGeneration == kv.Generation && conditions.IsTrue(kv, conditions.Ready)
}

// awaitConverged waits until the Keyval is Ready for its own generation with every
// server ready, and reads it into kv.
func (e *env) awaitConverged(t *testing.T, kv *storev1alpha1.Keyval) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		if err := e.Get(ctx, client.ObjectKeyFromObject(kv), kv); err != nil {
			return err
		}
		if !converged(kv) || kv.Status.ReadyReplicas != kv.Spec.Replicas {
			return fmt.Errorf("not converged: %d of %d ready, %+v", kv.Status.ReadyReplicas, kv.Spec.Replicas, kv.Status.Conditions)
		}
		return nil
	})
}

// awaitQuota waits until the quota controller has counted what quota limits, so that
// the API server holds new pods to its current spec.
func (e *env) awaitQuota(t *testing.T, quota *corev1.ResourceQuota) {
	t.Helper()
	reconciletest.Eventually(t, func(ctx context.Context) error {
		live := &corev1.ResourceQuota{}
		if err := e.Get(ctx, client.ObjectKeyFromObject(quota), live); err != nil {
			return err
		}
		if hard, want := live.Status.Hard[corev1.ResourcePods], quota.Spec.Hard[corev1.ResourcePods]; hard.Cmp(want) != 0 {
			return fmt.Errorf("the quota's status says %s pods; want %s", hard.String(), want.String())
		}
		return nil
	})
}

// get reads the object of the name in the test's namespace into obj.
func (e *env) get(t *testing.T, name string, obj client.Object) {
	t.Helper()
	if err := e.Get(t.Context(), client.ObjectKey{Namespace: e.Namespace, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
}

// statefulSet returns the Keyval's StatefulSet.
func (e *env) statefulSet(t *testing.T, kv *storev1alpha1.Keyval) *appsv1.StatefulSet {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	e.get(t, kv.Name, sts)
	return sts
}

// claims returns the Keyval's volume claims, by name.
func (e *env) claims(t *testing.T, kv *storev1alpha1.Keyval) []corev1.PersistentVolumeClaim {
	t.Helper()
	var list corev1.PersistentVolumeClaimList
	if err := e.List(t.Context(), &list, client.InNamespace(e.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": kv.Name}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.PersistentVolumeClaim) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// pods returns the Keyval's pods.
func (e *env) pods(t *testing.T, kv *storev1alpha1.Keyval) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := e.List(t.Context(), &list, client.InNamespace(e.Namespace), client.MatchingLabels{"app.kubernetes.io/instance": kv.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// scale reads the Keyval's scale subresource.
func (e *env) scale(t *testing.T, kv *storev1alpha1.Keyval) *autoscalingv1.Scale {
	t.Helper()
	scale := &autoscalingv1.Scale{}
	if err := e.SubResource("scale").Get(t.Context(), kv, scale); err != nil {
		t.Fatal(err)
	}
	return scale
}

// names lists the claims' names.
func names(claims []corev1.PersistentVolumeClaim) []string {
	out := make([]string, len(claims))
	for i, c := range claims {
		out[i] = c.Name
	}
	return out
}

// podNames lists the pods' names, sorted.
func podNames(pods []corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	slices.Sort(out)
	return out
}
