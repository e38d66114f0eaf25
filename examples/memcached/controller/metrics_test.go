package controller_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/reconcilekit/reconcilekit/examples/memcached/controller"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// runServingMetrics runs the operator as Env.Run does, with its metrics endpoint on a free
// local port, and returns the endpoint's address.
func (e *env) runServingMetrics(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	opts := manager.Options{
		Scheme: operator.Scheme,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{e.Namespace: {}},
			DefaultTransform:  ownership.TransformCompact(),
		},
		Metrics: metricsserver.Options{BindAddress: addr},
	}
	reconciletest.StartManager(t, e.Requests.Wrap(e.Config), opts, controller.Setup)
	return "http://" + addr + "/metrics"
}

// scrape reads the endpoint and returns its reconcilekit_ lines.
func scrape(ctx context.Context, url string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var lines []string
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if strings.Contains(s.Text(), "reconcilekit_") {
			lines = append(lines, s.Text())
		}
	}
	return lines, s.Err()
}

// value returns the value of the series whose line contains every one of parts, summed.
func value(lines []string, parts ...string) (float64, bool) {
	var sum float64
	var found bool
next:
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

func TestMemcachedMetricsShowItsConditionsAFightAndGoWithIt(t *testing.T) {
	e := newEnv(t)
	url := e.runServingMetrics(t)
	ns := `namespace="` + e.Namespace + `"`
	mc := e.create(t, "cache", 2)
	e.awaitAvailable(t, mc)

	// Reconciles and writes over the run, sampled from the endpoint, for the chart.
	var mu sync.Mutex
	var samples [][3]float64 // seconds, reconciles, writes
	start := time.Now()
	sampling, stop := context.WithCancel(t.Context())
	defer stop()
	go func() {
		for sampling.Err() == nil {
			if lines, err := scrape(sampling, url); err == nil {
				r, _ := value(lines, "reconcilekit_reconciles_total{", `kind="Memcached"`)
				w, _ := value(lines, "reconcilekit_writes_total{")
				mu.Lock()
				samples = append(samples, [3]float64{time.Since(start).Seconds(), r, w})
				mu.Unlock()
			}
			time.Sleep(250 * time.Millisecond)
		}
	}()

	reconciletest.Eventually(t, func(ctx context.Context) error {
		lines, err := scrape(ctx, url)
		if err != nil {
			return err
		}
		for _, c := range []string{`type="Available"`, `type="Ready"`} {
			if v, ok := value(lines, "reconcilekit_condition{", ns, `name="cache"`, c, `status="True"`); !ok || v != 1 {
				return fmt.Errorf("no series of the Memcached with %s in:\n%s", c, strings.Join(lines, "\n"))
			}
		}
		return nil
	})
	converged, _ := scrape(t.Context(), url)
	if path := os.Getenv("RECONCILEKIT_SCRAPE"); path != "" {
		if err := os.WriteFile(path, []byte(strings.Join(converged, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A second writer resets the replicas every 100 ms for 15 s, forcing them as its own.
	patches := e.Requests.Count("patch", "deployments")
	fightStart := time.Now()
	for time.Since(fightStart) < 15*time.Second {
		replicas := appsv1ac.Deployment("cache", e.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(3))
		if err := e.Apply(t.Context(), replicas, client.FieldOwner("replica-fighter"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fought := e.Requests.Count("patch", "deployments") - patches
	t.Logf("against 150 writes of a second writer in 15 s, the operator wrote the Deployment %d times (%.2f/s)", fought, float64(fought)/15)
	statusWrites := e.Requests.Count("patch", "memcacheds/status")
	t.Logf("status writes of the Memcached over the whole run: %d", statusWrites)
	if statusWrites > 30 {
		t.Errorf("the Memcached's status was written %d times: the fight must not make a loop of its own", statusWrites)
	}
	if fought > 6 {
		t.Errorf("the operator wrote the Deployment %d times in 15 s of a fight, want at most 6: it must back off", fought)
	}
	lines, err := scrape(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := value(lines, "reconcilekit_fights_total{", `kind="Deployment"`); v < 1 {
		t.Errorf("reconcilekit_fights_total{kind=\"Deployment\"} = %v, want at least 1", v)
	}
	var events eventsv1.EventList
	if err := e.List(t.Context(), &events, client.InNamespace(e.Namespace)); err != nil {
		t.Fatal(err)
	}
	var warning string
	for _, ev := range events.Items {
		if ev.Regarding.UID == mc.UID && ev.Type == corev1.EventTypeWarning && ev.Reason == "Fighting" {
			warning = ev.Note
		}
	}
	if !strings.Contains(warning, "replica-fighter") || !strings.Contains(warning, "spec.replicas") {
		t.Errorf("Warning Fighting event %q, want one naming replica-fighter and spec.replicas", warning)
	}
	t.Logf("event: %s", warning)

	if err := e.Delete(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	reconciletest.Eventually(t, func(ctx context.Context) error {
		lines, err := scrape(ctx, url)
		if err != nil {
			return err
		}
		if _, ok := value(lines, "reconcilekit_condition{", ns); ok {
			return fmt.Errorf("series of the deleted Memcached remain")
		}
		return nil
	})
	time.Sleep(time.Second)
	stop()
	mu.Lock()
	defer mu.Unlock()
	if path := os.Getenv("RECONCILEKIT_SAMPLES"); path != "" {
		var b strings.Builder
		for _, s := range samples {
			fmt.Fprintf(&b, "%.2f %.0f %.0f\n", s[0], s[1], s[2])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
