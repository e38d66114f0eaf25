package controller_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// fights is reconcilekit_fights_total of every kind, read from the endpoint.
func fights(t *testing.T, m reconciletest.Endpoint) float64 {
	t.Helper()
	v, _ := m.Read(t).Sum("reconcilekit_fights_total", nil)
	return v
}

// fightWarnings returns the notes of the Warning Fighting events regarding obj.
func (e *env) fightWarnings(t *testing.T, obj client.Object) []string {
	t.Helper()
	var events eventsv1.EventList
	if err := e.List(t.Context(), &events, client.InNamespace(e.Namespace)); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, ev := range events.Items {
		if ev.Regarding.UID == obj.GetUID() && ev.Type == corev1.EventTypeWarning && ev.Reason == "Fighting" {
			notes = append(notes, ev.Note)
		}
	}
	return notes
}

// sampler reads the endpoint every quarter of a second, for the chart of a run: the
// Memcached's reconciles and the writes of every kind, with what the test was doing.
type sampler struct {
	mu      sync.Mutex
	start   time.Time
	phase   string
	samples []sample
}

func (s *sampler) run(ctx context.Context, m reconciletest.Endpoint) {
	s.start = time.Now()
	for ctx.Err() == nil {
		if got, err := m.Scrape(ctx); err == nil {
			r, _ := got.Sum("reconcilekit_reconciles_total", map[string]string{"kind": "Memcached"})
			w, _ := got.Sum("reconcilekit_writes_total", nil)
			s.mu.Lock()
			s.samples = append(s.samples, sample{time.Since(s.start).Seconds(), r, w, s.phase})
			s.mu.Unlock()
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// enter names what the test does from now on.
func (s *sampler) enter(phase string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = phase
}

func TestMemcachedMetricsShowItsConditionsAndAFightAndGoWithIt(t *testing.T) {
	e := newEnv(t)
	_, metrics := e.RunServingMetrics(t)
	sampling, stop := context.WithCancel(t.Context())
	defer stop()
	s := &sampler{phase: "create"}
	done := make(chan struct{})
	go func() { defer close(done); s.run(sampling, metrics) }()

	mc := e.create(t, "cache", 2)
	e.awaitAvailable(t, mc)
	metrics.AwaitConditions(t, "Memcached", mc, map[string]string{"Available": "True", "Ready": "True", "Progressing": "False", "Degraded": "False"})
	converged := metrics.Read(t)
	if v, _ := converged.Sum("reconcilekit_writes_total", map[string]string{"kind": "Deployment", "write": "create", "changed": "true"}); v < 1 {
		t.Errorf("reconcilekit_writes_total counts %v Deployments created, want at least the Memcached's", v)
	}
	if path := os.Getenv("RECONCILEKIT_SCRAPE"); path != "" {
		if err := os.WriteFile(path, []byte(converged.Text("reconcilekit_")), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A normal resize and a normal rollout (a new port changes the pods) are no fight.
	fightsBefore := fights(t, metrics)
	s.enter("resize and rollout")
	e.resize(t, mc, 3)
	e.awaitAvailable(t, mc)
	before := mc.DeepCopy()
	mc.Spec.Server.Port = 11300
	if err := e.Patch(t.Context(), mc, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	e.awaitAvailable(t, mc)
	if got := fights(t, metrics) - fightsBefore; got != 0 || len(e.fightWarnings(t, mc)) > 0 {
		t.Errorf("a resize and a rollout raised %v fights and warnings %q, want none", got, e.fightWarnings(t, mc))
	}

	// A second writer resets the replicas every 100 ms for 15 s, forcing them as its own.
	s.enter("a second writer resets the replicas")
	patches := e.Requests.Count("patch", "deployments")
	var resets int
	for fightStart := time.Now(); time.Since(fightStart) < 15*time.Second; resets++ {
		replicas := appsv1ac.Deployment("cache", e.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5))
		if err := e.Apply(t.Context(), replicas, client.FieldOwner("replica-fighter"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.enter("delete")
	fought := e.Requests.Count("patch", "deployments") - patches
	t.Logf("against %d writes of a second writer in 15 s, the operator wrote the Deployment %d times (%.2f/s)", resets, fought, float64(fought)/15)
	statusWrites := e.Requests.Count("patch", "memcacheds/status")
	t.Logf("status writes of the Memcached over the whole run: %d", statusWrites)
	if statusWrites > 40 {
		t.Errorf("the Memcached's status was written %d times: the fight must not make a loop of its own", statusWrites)
	}
	if fought > 6 {
		t.Errorf("the operator wrote the Deployment %d times in 15 s of a fight, want at most 6: it must back off", fought)
	}
	after := metrics.Read(t)
	if v, _ := after.Sum("reconcilekit_fights_total", map[string]string{"kind": "Deployment"}); v < 1 {
		t.Errorf("reconcilekit_fights_total{kind=\"Deployment\"} = %v, want at least 1", v)
	}
	if v, _ := after.Sum("reconcilekit_writes_backed_off_total", map[string]string{"kind": "Deployment"}); v < 1 {
		t.Errorf("reconcilekit_writes_backed_off_total{kind=\"Deployment\"} = %v, want at least 1", v)
	}
	warnings := e.fightWarnings(t, mc)
	if len(warnings) == 0 || !strings.Contains(warnings[0], "replica-fighter") || !strings.Contains(warnings[0], "spec.replicas") {
		t.Errorf("Warning Fighting events %q, want one naming replica-fighter and spec.replicas", warnings)
	}
	logged := logs.Containing("fight detected", e.Namespace, "replica-fighter")
	if len(logged) == 0 {
		t.Error("no log line of the fight naming replica-fighter")
	}
	t.Logf("event: %q\nlog: %s", warnings, logged)

	if err := e.Delete(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	metrics.AwaitConditions(t, "Memcached", mc, nil)
	time.Sleep(time.Second)
	stop()
	<-done
	if path := os.Getenv("RECONCILEKIT_CHART"); path != "" {
		if err := os.WriteFile(path, chart(s.samples), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var deployments = appsv1.SchemeGroupVersion.WithResource("deployments")

func TestMemcachedBacksOffFromAWebhookThatRewritesItsDeployment(t *testing.T) {
	e := newEnv(t)
	// A policy webhook caps memcached's memory: it rewrites the -m=64 the operator sets to
	// -m=32, and stamps every admission, as some policy engines do. So every write the
	// operator sends changes the Deployment, whose change brings the operator back to
	// write it again: the loop at full speed, as fast as the API server admits.
	var stamps int
	var mu sync.Mutex
	hook := operator.ControlPlane.MutatingWebhook(t, e.Namespace, deployments, func(obj map[string]any) {
		spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		for _, c := range spec["containers"].([]any) {
			command, _ := c.(map[string]any)["command"].([]any)
			for i, arg := range command {
				if arg == "-m=64" {
					command[i] = "-m=32"
				}
			}
		}
		mu.Lock()
		stamps++
		stamp := fmt.Sprint(stamps)
		mu.Unlock()
		meta := obj["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
		}
		annotations["policy.example.com/admission"] = stamp
		meta["annotations"] = annotations
	})
	_, metrics := e.RunServingMetrics(t)
	fightsBefore := fights(t, metrics)

	start := time.Now()
	mc := e.create(t, "cache", 1)
	warning := e.AwaitEvent(t, mc, reconciletest.Event{Type: corev1.EventTypeWarning, Reason: "Fighting"})
	detectedIn, detectedAfter := time.Since(start), e.Requests.Count("patch", "deployments")
	t.Logf("detected after the create and %d applies, in %v: %s", detectedAfter, detectedIn.Round(time.Millisecond), warning.Note)
	// The applies that make a fight: the first takes the fields from the create, two more
	// revert the same fields.
	if detectedAfter > 3 {
		t.Errorf("the fight was detected after %d applies, want at most 3", detectedAfter)
	}
	for _, want := range []string{"admission", "memcached-operator", "-m=32", "-m=64", "spec.template.spec.containers"} {
		if !strings.Contains(warning.Note, want) {
			t.Errorf("the Warning Fighting event says %q; want it to mention %q", warning.Note, want)
		}
	}
	if got := fights(t, metrics) - fightsBefore; got < 1 {
		t.Errorf("reconcilekit_fights_total grew by %v, want at least 1", got)
	}
	if len(logs.Containing("fight detected", e.Namespace, `"admission":true`)) == 0 {
		t.Error("no log line of the fight saying it comes from admission")
	}

	// The operator backs off: its writes against the webhook over the next 30 s.
	const watch = 30 * time.Second
	time.Sleep(watch)
	after := e.Requests.Count("patch", "deployments") - detectedAfter
	t.Logf("then %d applies in %v (%.2f/s); the webhook admitted %d writes of the Deployment in all, and rewrote %d",
		after, watch, float64(after)/watch.Seconds(), hook.Admitted(), hook.Mutated())
	// The back-off is 10 s, then 20 s: two applies in 30 s, one more for a slow start.
	if after > 3 {
		t.Errorf("the operator applied the Deployment %d times in %v after the fight was detected, want at most 3: it must back off", after, watch)
	}
	dep := &appsv1.Deployment{}
	if err := e.Get(t.Context(), client.ObjectKeyFromObject(mc), dep); err != nil {
		t.Fatal(err)
	}
	if command := strings.Join(dep.Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(command, "-m=32") {
		t.Errorf("the Deployment runs %q; want the webhook's -m=32 kept", command)
	}
}

func TestMemcachedBacksOffFromAWriterThatResetsItsConditions(t *testing.T) {
	e := newEnv(t)
	_, metrics := e.RunServingMetrics(t)
	mc := e.create(t, "cache", 1)
	e.awaitAvailable(t, mc)
	fightsBefore := fights(t, metrics)

	// A second controller that also thinks it owns the Memcached's availability: every
	// 200 ms for 15 s it sets Available False. Each write the operator sends puts the
	// condition back, so each changes the object: only the reverts tell it is a fight.
	statusWrites := e.Requests.Count("patch", "memcacheds/status")
	var resets int
	for start := time.Now(); time.Since(start) < 15*time.Second; resets++ {
		prober := &unstructured.Unstructured{}
		prober.SetGroupVersionKind(cachev1beta1.GroupVersion.WithKind("Memcached"))
		prober.SetNamespace(e.Namespace)
		prober.SetName(mc.Name)
		condition := map[string]any{"type": "Available", "status": "False", "reason": "ProbeFailed",
			"message": "memcached does not answer", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
		if err := unstructured.SetNestedSlice(prober.Object, []any{condition}, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		if err := e.SubResource("status").Apply(t.Context(), client.ApplyConfigurationFromUnstructured(prober),
			client.FieldOwner("availability-prober"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	fought := e.Requests.Count("patch", "memcacheds/status") - statusWrites
	t.Logf("against %d writes of a second writer in 15 s, the operator wrote the Memcached's status %d times (%.2f/s)", resets, fought, float64(fought)/15)
	// Three writes make the fight, then 10 s of back-off: one more write, and one for a
	// slow start.
	if fought > 5 {
		t.Errorf("the operator wrote the status %d times in 15 s of a fight, want at most 5: it must back off", fought)
	}
	if got := fights(t, metrics) - fightsBefore; got < 1 {
		t.Errorf("reconcilekit_fights_total grew by %v, want at least 1", got)
	}
	if v, _ := metrics.Read(t).Sum("reconcilekit_fights_total", map[string]string{"kind": "Memcached", "write": "status"}); v < 1 {
		t.Errorf("reconcilekit_fights_total{kind=\"Memcached\",write=\"status\"} = %v, want at least 1", v)
	}
	warnings := e.fightWarnings(t, mc)
	if len(warnings) == 0 || !strings.Contains(warnings[0], "field manager availability-prober") ||
		!strings.Contains(warnings[0], `status.conditions[Available].status: "False" → "True"`) {
		t.Errorf("Warning Fighting events %q, want one naming availability-prober and the condition's status", warnings)
	}
	if len(logs.Containing("fight detected over the status", e.Namespace, "availability-prober")) == 0 {
		t.Error("no log line of the status fight naming availability-prober")
	}
	t.Logf("event: %q", warnings)
}
