package main

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

var every = flag.Bool("benchmark.every", false, "run the smoke test on every implementation of every kind, not the library on every kind and each other implementation on one")

// Every implementation converges on a real cluster, kstatus reading each object Current,
// and the figures the benchmark reports for steady state hold: the
// reconcilekit operators, in this process or in their own, make no request while they
// resync, the seed-style Memcached one status update per object; the operators run as
// processes are measured as the others are (their reconciles read from their metrics,
// their heap from their endpoint, a CPU profile written when asked for).
func TestEveryImplementationConvergesAndOnlyTheSeedWritesWhileItResyncs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster per run")
	}
	ctrl.SetLogger(logr.Discard())
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, profiles := t.TempDir(), t.TempDir()
	peer, err := buildPeer(t.Context(), root, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range smokeRuns(*every) {
		k, impl := s.kind, s.impl
		objects := 2
		if isProcess(impl) {
			// A process's CPU is read from /proc in ticks of 10 ms, and two
			// objects may cost less than one: ten cost several.
			objects = 10
		}
		n := float64(objects)
		t.Run(k.name+"/"+impl, func(t *testing.T) {
			r := run{kind: k, impl: impl, n: objects, nodes: 1, peer: peer, dir: dir, operatorProfiles: profiles}
			m, err := r.measure(t.Context(), root)
			if err != nil {
				t.Fatal(err)
			}
			if isProcess(impl) {
				// A CPU profile is gzipped protocol buffers, written as the process stops.
				name := r.processProfile(profiles, ".cpu.pprof")
				if b, err := os.ReadFile(name); err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
					t.Errorf("the process's CPU profile %s was not written (%v, %d bytes)", name, err, len(b))
				}
			}
			switch {
			case isIdeal(impl) && m.Writes != float64(n)*k.idealWrites(impl != ideal):
				t.Errorf("the ideal pipeline made %v writes, want %v per object", m.Writes, k.idealWrites(impl != ideal))
			case (impl == library || impl == traced || impl == libraryProcess) && m.ResyncWrites+m.ResyncReads > 0:
				t.Errorf("the resync made %v writes and %v reads, want none", m.ResyncWrites, m.ResyncReads)
			case impl == seeded && k.name == "Memcached" && m.ResyncWrites != n:
				t.Errorf("the seed-style Memcached resync made %v writes, want one status update per object", m.ResyncWrites)
			case impl != bare && !isIdeal(impl) && m.ResyncReconciles < n:
				t.Errorf("the resync reconciled %v times, want every object at least once", m.ResyncReconciles)
			case isProcess(impl) && (m.Reconciles < n || m.Writes < n || m.HeapPerObject == 0 || m.OperatorCPU == 0):
				t.Errorf("the process was not measured: %v reconciles, %v writes, %v bytes of heap per object, %v s of CPU", m.Reconciles, m.Writes, m.HeapPerObject, m.OperatorCPU)
			}
		})
	}
}

// A smokeRun is one implementation of one kind that the smoke test runs.
type smokeRun struct {
	kind *kind
	impl string
}

// smokeRuns lists the runs of the smoke test: with every, each implementation of each kind
// (39 clusters, longer than a package's timeout on a loaded machine); otherwise the
// library's operator on every kind, and each other implementation on one kind, the kinds
// taken in turn, so that every implementation and every kind is run in a third of the time.
func smokeRuns(every bool) []smokeRun {
	var runs []smokeRun
	turn := 0
	for _, impl := range implementations {
		if every || impl == library {
			for _, k := range kinds {
				if k.has(impl) {
					runs = append(runs, smokeRun{k, impl})
				}
			}
			continue
		}
		for i := range kinds {
			if k := kinds[(turn+i)%len(kinds)]; k.has(impl) {
				runs = append(runs, smokeRun{k, impl})
				break
			}
		}
		turn++
	}
	return runs
}

func TestTheSmokeTestRunsEveryImplementationAndEveryKind(t *testing.T) {
	all, some := smokeRuns(true), smokeRuns(false)
	impls, names := map[string]bool{}, map[string]bool{}
	for _, r := range some {
		impls[r.impl], names[r.kind.name] = true, true
		if r.impl == seeded && r.kind.name != "Memcached" {
			t.Errorf("the seed-style implementation runs on %s, want Memcached, whose resync writes are checked", r.kind.name)
		}
	}
	for _, r := range all {
		if !impls[r.impl] || !names[r.kind.name] {
			t.Errorf("the smoke test leaves out %s of %s", r.impl, r.kind.name)
		}
	}
	if len(some) >= len(all)/2 {
		t.Errorf("the smoke test runs %d of %d runs, want fewer than half", len(some), len(all))
	}
}

func TestPercentilesAreTheMedianAndTheNinetiethOfTheObjectsLatencies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seconds  []int
		p50, p90 float64
	}{
		{"none converged", nil, 0, 0},
		{"one", []int{7}, 7, 7},
		{"ten, unordered", []int{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, 5, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var latencies []time.Duration
			for _, s := range tc.seconds {
				latencies = append(latencies, time.Duration(s)*time.Second)
			}
			if p50, p90 := percentiles(latencies); p50 != tc.p50 || p90 != tc.p90 {
				t.Errorf("percentiles = %v, %v; want %v, %v", p50, p90, tc.p50, tc.p90)
			}
		})
	}
}
