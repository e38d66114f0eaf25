package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"
)

// A report holds the medians of every kind and implementation measured at one N.
type report struct {
	n, rounds, nodes int
	kinds            []*kind
	medians          map[*kind]map[string]measurement
	experiment       // how the library-built operators ran otherwise than they ship, if at all
}

func newReport(n, rounds, nodes int, x experiment, kinds []*kind, measured map[*kind]map[string][]measurement) *report {
	r := &report{n: n, rounds: rounds, nodes: nodes, experiment: x, kinds: kinds, medians: map[*kind]map[string]measurement{}}
	for _, k := range kinds {
		r.medians[k] = map[string]measurement{}
		for impl, ms := range measured[k] {
			r.medians[k][impl] = median(ms)
		}
	}
	return r
}

// median reduces measurements to their medians, field by field.
func median(ms []measurement) measurement {
	var out measurement
	for i, field := range out.fields() {
		values := make([]float64, len(ms))
		for j := range ms {
			values[j] = *ms[j].fields()[i]
		}
		slices.Sort(values)
		mid := len(values) / 2
		*field = values[mid]
		if len(values)%2 == 0 {
			*field = (values[mid-1] + values[mid]) / 2
		}
	}
	return out
}

// print writes the settings, the table and, last, the summary line.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nN=%d objects of each kind (Memcached and PodSet of size 1), median of %d rounds, a fresh cluster for every run.\n", r.n, r.rounds)
	fmt.Fprintf(w, "Control plane: etcd and kube-apiserver as envtest starts them; kube-controller-manager --kube-api-qps=5000\n"+
		"--kube-api-burst=10000 --concurrent-deployment-syncs=50 --concurrent-replicaset-syncs=50; kube-scheduler qps 5000,\n"+
		"burst 10000; kwok with %d node(s) of 1000 pods; operator clients unthrottled; GOMAXPROCS=%d on %d CPUs.\n",
		r.nodes, runtime.GOMAXPROCS(0), runtime.NumCPU())
	ran := "as the examples ship them"
	if r.any() {
		ran = r.experiment.String() + ", not as the examples ship them"
	}
	fmt.Fprintf(w, "Reconciles at a time: seed-style as the seeds (Memcached 1, PodSet 2, At 1); reconcilekit %s:", ran)
	for _, k := range r.kinds {
		fmt.Fprintf(w, " %s %d", k.name, k.library.concurrency)
	}
	fmt.Fprint(w, ".\n")
	fmt.Fprint(w, "Flux-style, Cluster-API-style and \"reconcilekit, process\" run as processes of their own (the peer binary), reconciling as many\n"+
		"objects at a time as reconcilekit, unthrottled, through a proxy that counts their requests as the others' are counted; their\n"+
		"process CPU is the benchmark's and theirs together (theirs alone in the last column), so that it covers what it covers for the others.\n\n")

	if r.faults > 0 {
		fmt.Fprintf(w, "Faults: %.0f %% of the in-process operators' writes failed with 500 Internal Server Error before they reached the API server.\n"+
			"Deferred own/child: the reconciles reconcilekit put off until its cache showed its last write of the object, or of a child.\n\n", 100*r.faults)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\timplementation\tconverge s\tx ideal\tx full ideal\tobject p50 s\tobject p90 s\tAPI CPU ms/obj\tprocess CPU ms/obj\tetcd/kcm/sched/kwok CPU ms/obj\twrites/obj\tevents/obj\treads/obj\treconciles/obj\tconflicts\talready exists\tdeferred own/child\t"+
		"resync s\tresync writes\tresync reads\tresync reconciles/obj\theap KiB/obj\toperator CPU ms/obj\t")
	n := float64(r.n)
	for _, k := range r.kinds {
		floor, fullFloor := r.medians[k][ideal].Converge, r.medians[k][fullIdeal].Converge
		for _, impl := range implementations {
			m, ok := r.medians[k][impl]
			if !ok {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%.2f\t%.2f\t%.1f\t%.1f\t%.1f/%.1f/%.1f/%.1f\t", k.name, impl, m.Converge, ratio(m.Converge, floor), ratio(m.Converge, fullFloor),
				m.LatencyP50, m.LatencyP90, 1000*m.APIServerCPU/n, 1000*m.ProcessCPU/n,
				1000*m.EtcdCPU/n, 1000*m.ControllerManagerCPU/n, 1000*m.SchedulerCPU/n, 1000*m.KwokCPU/n)
			switch impl {
			case bare:
				fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t\t\t\t")
			case ideal, fullIdeal, watching:
				fmt.Fprintf(tw, "%.2f\t%.2f\t%.2f\t\t%.0f\t%.0f\t\t\t\t\t\t\t\t\n", m.Writes/n, m.Events/n, m.Reads/n, m.Conflicts, m.AlreadyExists)
			default:
				operator, deferred := "", ""
				if isProcess(impl) {
					operator = fmt.Sprintf("%.1f", 1000*m.OperatorCPU/n)
				}
				if impl == library || impl == traced || impl == unguarded {
					deferred = fmt.Sprintf("%.0f/%.0f", m.DeferredOwn, m.DeferredChild)
				}
				fmt.Fprintf(tw, "%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%s\t%.2f\t%.0f\t%.0f\t%.2f\t%.1f\t%s\t\n",
					m.Writes/n, m.Events/n, m.Reads/n, m.Reconciles/n, m.Conflicts, m.AlreadyExists, deferred,
					m.Resync, m.ResyncWrites, m.ResyncReads, m.ResyncReconciles/n, m.HeapPerObject/1024, operator)
			}
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.summary())
}

// ratio is a over b with two decimals, or nothing when b was not measured.
func ratio(a, b float64) string {
	if b == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f", a/b)
}

// summary is one line for machines: the library-built operators' writes during the resync
// (all kinds), their writes per object to converge, and how they compare with the ideal
// pipeline, with the ideal pipeline writing their full status, with the seed-style ones
// and with the best peer (the faster of Flux-style and Cluster-API-style, and the one of
// fewer writes), each the worst over the kinds. The peers are compared with reconcilekit
// run as they are, as a process of its own, when it was measured so. A ratio to an
// implementation that was not measured is left out.
func (r *report) summary() string {
	var steady, perObject, vsIdealTime, vsIdealWrites, vsFullTime, vsSeedWrites, vsSeedTime, vsPeerTime, vsPeerWrites float64
	for _, k := range r.kinds {
		if peerTime, peerWrites := r.bestPeer(k); peerTime > 0 {
			lib, ok := r.medians[k][libraryProcess]
			if !ok {
				lib = r.medians[k][library]
			}
			if lib.Converge > 0 {
				vsPeerTime = max(vsPeerTime, lib.Converge/peerTime)
				vsPeerWrites = max(vsPeerWrites, lib.Writes/peerWrites)
			}
		}
		lib, floor, full, seed := r.medians[k][library], r.medians[k][ideal], r.medians[k][fullIdeal], r.medians[k][seeded]
		steady += lib.ResyncWrites
		perObject = max(perObject, lib.Writes/float64(r.n))
		if floor.Converge > 0 {
			vsIdealTime = max(vsIdealTime, lib.Converge/floor.Converge)
			vsIdealWrites = max(vsIdealWrites, lib.Writes/floor.Writes)
		}
		if full.Converge > 0 {
			vsFullTime = max(vsFullTime, lib.Converge/full.Converge)
		}
		if seed.Converge > 0 {
			vsSeedWrites = max(vsSeedWrites, lib.Writes/seed.Writes)
			vsSeedTime = max(vsSeedTime, lib.Converge/seed.Converge)
		}
	}
	line := fmt.Sprintf("summary: steady_writes=%.0f writes_per_object=%.2f", steady, perObject)
	if vsIdealTime > 0 {
		line += fmt.Sprintf(" time_vs_ideal=%.2f writes_vs_ideal=%.2f", vsIdealTime, vsIdealWrites)
	}
	if vsFullTime > 0 {
		line += fmt.Sprintf(" time_vs_full_ideal=%.2f", vsFullTime)
	}
	if vsSeedTime > 0 {
		line += fmt.Sprintf(" time_vs_seed=%.2f writes_vs_seed=%.2f", vsSeedTime, vsSeedWrites)
	}
	if vsPeerTime > 0 {
		line += fmt.Sprintf(" time_vs_best_peer=%.2f writes_vs_best_peer=%.2f", vsPeerTime, vsPeerWrites)
	}
	return line
}

// bestPeer is the shortest convergence and the fewest writes of the peers measured on k
// (each may be a different peer's); 0, 0 if none was.
func (r *report) bestPeer(k *kind) (converge, writes float64) {
	for _, impl := range []string{fluxStyle, capiStyle} {
		m, ok := r.medians[k][impl]
		if !ok || m.Converge == 0 {
			continue
		}
		if converge == 0 || m.Converge < converge {
			converge = m.Converge
		}
		if writes == 0 || m.Writes < writes {
			writes = m.Writes
		}
	}
	return converge, writes
}

// A result is the medians of one kind and implementation at one N, as results.json keeps it.
type result struct {
	N              int         `json:"n"`
	Kind           string      `json:"kind"`
	Implementation string      `json:"implementation"`
	Rounds         int         `json:"rounds"`
	Date           string      `json:"date"`
	Median         measurement `json:"median"`
}

// record replaces the results of this report's N in the results file and redraws the
// chart from every N the file holds.
func (r *report) record(resultsPath, chartPath string) error {
	results, err := readResults(resultsPath)
	if err != nil {
		return err
	}
	date := time.Now().UTC().Format(time.DateOnly)
	for _, k := range r.kinds {
		for impl, m := range r.medians[k] {
			results = slices.DeleteFunc(results, func(old result) bool {
				return old.N == r.n && old.Kind == k.name && old.Implementation == impl
			})
			results = append(results, result{N: r.n, Kind: k.name, Implementation: impl, Rounds: r.rounds, Date: date, Median: m})
		}
	}
	slices.SortFunc(results, func(a, b result) int {
		return cmp.Or(cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind)),
			cmp.Compare(slices.Index(implementations, a.Implementation), slices.Index(implementations, b.Implementation)),
			cmp.Compare(a.N, b.N))
	})
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(resultsPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(chartPath, chart(results), 0o644)
}

// readResults reads the results recorded at path; none if there is no file.
func readResults(path string) ([]result, error) {
	var results []result
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(data, &results); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return results, nil
}

// kindOrder orders kinds as the benchmark measures them.
func kindOrder(name string) int {
	return slices.IndexFunc(kinds, func(k *kind) bool { return k.name == name })
}
