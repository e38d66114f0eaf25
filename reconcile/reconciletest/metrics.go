package reconciletest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Endpoint is the metrics endpoint of a manager a test runs, as Prometheus would scrape
// it: over HTTP, in the text exposition format.
type Endpoint struct {
	// URL is the endpoint's address, http://127.0.0.1:port/metrics.
	URL string
}

// RunServingMetrics is Run with the manager's metrics endpoint served on a free local
// port, returned with the manager once it answers. The metrics are controller-runtime's registry, shared
// by every manager of the test binary: a counter counts the reconciles of all of them, so
// compare a counter's value before and after, not with a constant.
func (e *Env) RunServingMetrics(t testing.TB) (*Manager, Endpoint) {
	t.Helper()
	addr := FreeAddress(t)
	m, endpoint := e.run(t, addr), Endpoint{URL: "http://" + addr + "/metrics"}
	Eventually(t, func(ctx context.Context) error { // the manager serves it once started
		_, err := endpoint.Scrape(ctx)
		return err
	})
	return m, endpoint
}

// Scrape reads the endpoint once.
func (e Endpoint) Scrape(ctx context.Context) (Scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL, nil)
	if err != nil {
		return Scrape{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Scrape{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Scrape{}, fmt.Errorf("reconciletest: scraping %s: %s", e.URL, resp.Status)
	}
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		return Scrape{}, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(text)))
	if err != nil {
		return Scrape{}, fmt.Errorf("reconciletest: scraping %s: %w", e.URL, err)
	}
	s := Scrape{text: string(text)}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			s.Samples = append(s.Samples, Sample{Name: name, Labels: labels, Value: value(m)})
		}
	}
	return s, nil
}

// value is a counter's, a gauge's or an untyped sample's value; a histogram's or a
// summary's count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	}
	return 0
}

// Scrape is what one read of an endpoint returned.
type Scrape struct {
	// Samples are the series read, one per name and set of labels.
	Samples []Sample

	text string
}

// Sample is one series of a scrape.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Sum returns the sum of the values of the series named name whose labels include every
// one of labels, and whether any did: Sum("reconcilekit_reconciles_total",
// map[string]string{"kind": "Memcached"}) counts the Memcached's reconciles whatever
// their outcome.
func (s Scrape) Sum(name string, labels map[string]string) (float64, bool) {
	var sum float64
	var found bool
	for _, x := range s.Samples {
		if x.Name == name && includes(x.Labels, labels) {
			sum, found = sum+x.Value, true
		}
	}
	return sum, found
}

// Series returns the series named name whose labels include every one of labels.
func (s Scrape) Series(name string, labels map[string]string) []Sample {
	var matched []Sample
	for _, x := range s.Samples {
		if x.Name == name && includes(x.Labels, labels) {
			matched = append(matched, x)
		}
	}
	return matched
}

// Text returns the lines of the scrape, as the endpoint wrote them, of the series whose
// names begin with prefix, with their HELP and TYPE comments: what a person reading the
// endpoint sees of them.
func (s Scrape) Text(prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(s.text) {
		name := strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE ")
		if strings.HasPrefix(name, prefix) {
			b.WriteString(line)
		}
	}
	return b.String()
}

func includes(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Conditions returns what the reconcilekit_condition series of the scrape say of the
// object of kind named namespace/name: each condition type's status.
func (s Scrape) Conditions(kind, namespace, name string) map[string]string {
	conditions := map[string]string{}
	for _, x := range s.Series("reconcilekit_condition", map[string]string{"kind": kind, "namespace": namespace, "name": name}) {
		if x.Value == 1 {
			conditions[x.Labels["type"]] = x.Labels["status"]
		}
	}
	return conditions
}

// AwaitConditions waits until the endpoint's reconcilekit_condition series say of obj, of
// kind, exactly want (condition type → status): no condition missing, none more, and no
// series at all for an empty want, as once obj is gone.
func (e Endpoint) AwaitConditions(t testing.TB, kind string, obj client.Object, want map[string]string) {
	t.Helper()
	Eventually(t, func(ctx context.Context) error {
		s, err := e.Scrape(ctx)
		if err != nil {
			return err
		}
		if got := s.Conditions(kind, obj.GetNamespace(), obj.GetName()); !maps.Equal(got, want) {
			return fmt.Errorf("the conditions of %s %s/%s are %v, want %v", kind, obj.GetNamespace(), obj.GetName(), got, want)
		}
		return nil
	})
}

// Read is Scrape for a test: an endpoint that cannot be read fails it.
func (e Endpoint) Read(t testing.TB) Scrape {
	t.Helper()
	s, err := e.Scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Since returns by how much the series Sum adds up grew from the scrape before to s:
// what a counter of the registry, which every manager of the test binary shares, counted
// in between.
func (s Scrape) Since(before Scrape, name string, labels map[string]string) float64 {
	now, _ := s.Sum(name, labels)
	then, _ := before.Sum(name, labels)
	return now - then
}

// FreeAddress returns an address on the loopback interface that nothing listens on, for a
// server a test starts (a manager's metrics or health probes).
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reconciletest: finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}
