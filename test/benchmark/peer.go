package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// The implementations that run as processes of their own: the peer binary of the nested
// module test/benchmark/peers, in one of its styles. reconcilekit runs there too, the same
// example as in this process, so that the peers are compared with it on equal terms: one
// binary, the same hop through the counting proxy, the same measurement of CPU and heap.
const (
	fluxStyle      = "Flux-style"
	capiStyle      = "Cluster-API-style"
	libraryProcess = "reconcilekit, process"
)

// peerStyles is the peer binary's -style of each process implementation.
var peerStyles = map[string]string{fluxStyle: "flux", capiStyle: "capi", libraryProcess: "reconcilekit"}

// peerKinds are the kinds the peer binary runs, by the kind's name.
var peerKinds = map[string]string{"Memcached": "memcached", "PodSet": "podset", "At": "at", "Keyval": "keyval"}

// isProcess says impl runs as a process of its own.
func isProcess(impl string) bool { _, ok := peerStyles[impl]; return ok }

// buildPeer builds the peer binary into dir with the go command running this benchmark,
// in the nested module, and returns its path.
func buildPeer(ctx context.Context, root, dir string) (string, error) {
	out := filepath.Join(dir, "peer")
	cmd := exec.CommandContext(ctx, goCommand(), "build", "-o", out, ".")
	cmd.Dir = filepath.Join(root, "test", "benchmark", "peers")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the peer operators in %s: %w\n%s", cmd.Dir, err, stderr.Bytes())
	}
	return out, nil
}

// goCommand is the go command: the one in GOROOT when the benchmark runs with go run,
// else the one on PATH.
func goCommand() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if path := filepath.Join(root, "bin", "go"); fileExists(path) {
			return path
		}
	}
	return "go"
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// A countingProxy serves the API server, unauthenticated, on a loopback port, and
// forwards each request through the transport of a config: the one the in-process
// implementations' requests and conflicts are counted by. Its kubeconfig points a
// process at it.
type countingProxy struct {
	server     *http.Server
	kubeconfig string
}

// startProxy starts a proxy forwarding through cfg and writes its kubeconfig into dir.
func startProxy(cfg *rest.Config, dir string) (*countingProxy, error) {
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{
		server: &http.Server{
			Handler: &httputil.ReverseProxy{
				Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
				Transport:     transport,
				FlushInterval: -1, // watches stream
				ErrorLog:      log.New(io.Discard, "", 0),
			},
			ReadHeaderTimeout: time.Minute,
		},
		kubeconfig: filepath.Join(dir, "kubeconfig"),
	}
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["bench"] = &clientcmdapi.Cluster{Server: "http://" + ln.Addr().String()}
	kubeconfig.AuthInfos["bench"] = &clientcmdapi.AuthInfo{}
	kubeconfig.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	kubeconfig.CurrentContext = "bench"
	if err := clientcmd.WriteToFile(*kubeconfig, p.kubeconfig); err != nil {
		_ = ln.Close()
		return nil, err
	}
	go func() { _ = p.server.Serve(ln) }()
	return p, nil
}

// stop closes the proxy and every connection through it.
func (p *countingProxy) stop() error { return p.server.Close() }

// A peerProcess is the peer binary running one operator.
type peerProcess struct {
	cmd     *exec.Cmd
	address string // of its metrics server
	stderr  bytes.Buffer
	exited  chan struct{}
	err     error // how it exited, once exited is closed
}

// startPeer starts binary running style's operator of kind with concurrency workers,
// unthrottled as the in-process operators are, against kubeconfig, with env added to
// its environment and args to its flags, and returns once its cache has synced.
func startPeer(ctx context.Context, binary, style, kind, kubeconfig string, concurrency int, env, args []string) (*peerProcess, error) {
	address, err := freeAddress()
	if err != nil {
		return nil, err
	}
	p := &peerProcess{address: address, exited: make(chan struct{})}
	p.cmd = exec.Command(binary, append([]string{"-style", style, "-kind", kind, "-kubeconfig", kubeconfig,
		"-concurrency", strconv.Itoa(concurrency), "-qps", "-1", "-burst", "0", "-metrics-bind-address", address}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stderr, &p.stderr
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = peerAttr()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get("http://" + address + "/synced")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("the %s %s operator exited before its cache synced: %v\n%s", style, kind, p.err, p.stderr.Bytes())
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), p.stop())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("the %s %s operator's cache did not sync in 2 minutes", style, kind), p.stop())
		}
	}
}

// freeAddress is a loopback address with a port free a moment ago.
func freeAddress() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// stop ends the process, with SIGTERM and then, after 30 seconds, SIGKILL, and waits
// until it has exited.
func (p *peerProcess) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("the peer operator did not stop on SIGTERM in 30 seconds\n%s", p.stderr.Bytes())
	}
	if p.err != nil {
		return fmt.Errorf("the peer operator exited: %w\n%s", p.err, p.stderr.Bytes())
	}
	return nil
}

// cpu is the CPU time the process has used.
func (p *peerProcess) cpu() (time.Duration, error) { return processCPUOf(p.cmd.Process.Pid) }

// heap is the process's live heap after two full collections, in bytes.
func (p *peerProcess) heap() (float64, error) {
	body, err := p.get("/heap")
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(strings.TrimSpace(string(body)), 64)
}

// metrics is a snapshot of the process's metrics, as metricsNow is of this process's;
// empty if they cannot be read.
func (p *peerProcess) metrics() snapshot {
	body, err := p.get("/metrics")
	if err != nil {
		return snapshot{}
	}
	return parseMetrics(body)
}

func (p *peerProcess) get(path string) ([]byte, error) {
	resp, err := http.Get("http://" + p.address + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return body, err
}

// parseMetrics sums the series of each metric in Prometheus's text format, as
// metricsNow sums this process's.
func parseMetrics(text []byte) snapshot {
	s := snapshot{}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return s
	}
	for name, family := range families {
		v := s[name]
		for _, m := range family.GetMetric() {
			v.value += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			v.observed += m.GetHistogram().GetSampleSum()
			v.observations += m.GetHistogram().GetSampleCount()
		}
		s[name] = v
	}
	return s
}

// measureProcess measures r.impl, an implementation run as a process of its own, as
// measure does the others: the process's heap over no object, the convergence with its
// requests counted through the proxy (the in-process ones' counters), kstatus asserted
// on every object, the reconciles from its metrics; then a second process over the
// converged objects, its resync, and the heap it holds, per object, over the first's.
func (r run) measureProcess(ctx context.Context, cp *reconciletest.ControlPlane, scheme *k8sruntime.Scheme, admin client.Client) (m measurement, err error) {
	style, kind := peerStyles[r.impl], peerKinds[r.kind.name]
	if kind == "" {
		return m, fmt.Errorf("the peer operators do not run %s", r.kind.name)
	}
	var requests reconciletest.Counter
	var conflicts conflictCounter
	proxy, err := startProxy(conflicts.wrap(requests.Wrap(cp.Config)), r.dir)
	if err != nil {
		return m, err
	}
	defer func() { err = errors.Join(err, proxy.stop()) }()

	var env []string
	if r.heapProfiles != "" {
		// Every 4 KiB allocated sampled, not every 512 KiB: a profile that can tell what
		// a few hundred bytes per object are, at some cost to the run's speed.
		env = append(env, "GODEBUG=memprofilerate=4096")
	}
	var args []string
	if r.operatorProfiles != "" {
		args = append(args, "-cpuprofile", r.processProfile(r.operatorProfiles, ".cpu.pprof"))
	}
	op, err := startPeer(ctx, r.peer, style, kind, proxy.kubeconfig, r.kind.library.concurrency, env, args)
	if err != nil {
		return m, err
	}
	fixed, err := op.heap()
	if err != nil {
		return m, errors.Join(err, op.stop())
	}
	requests.Reset()
	conflicts.reset()
	reconciled := op.metrics().reconciles()
	r.operatorCPU = op.cpu
	r.operatorHeap = func() (float64, error) {
		held, err := op.heap()
		return held - fixed, err
	}
	if err = r.converge(ctx, cp, scheme, admin, r.kind.object, &m); err == nil {
		err = assertCurrent(ctx, admin, r.kind)
	}
	if err != nil {
		return m, errors.Join(err, op.stop())
	}
	r.count(&m, &requests, &conflicts)
	m.Reconciles = op.metrics().reconciles() - reconciled
	if err := op.stop(); err != nil {
		return m, err
	}
	if err := awaitQuiet(ctx, cp.Config, scheme, r.kind); err != nil {
		return m, err
	}

	requests.Reset()
	conflicts.reset()
	start := time.Now()
	if op, err = startPeer(ctx, r.peer, style, kind, proxy.kubeconfig, r.kind.library.concurrency, env, nil); err != nil {
		return m, err
	}
	drained, err := awaitDrained(ctx, float64(r.n), 0, op.metrics) // a new process: its counters start at 0
	if err != nil {
		return m, errors.Join(err, op.stop())
	}
	m.Resync = drained.Sub(start).Seconds()
	m.ResyncWrites, m.ResyncReads, m.ResyncConflicts = objectWrites(&requests)+events(&requests), float64(requests.Reads()), conflicts.count()
	m.ResyncReconciles = op.metrics().reconciles()
	full, err := op.heap()
	if err != nil {
		return m, errors.Join(err, op.stop())
	}
	m.HeapPerObject = (full - fixed) / float64(r.n)
	if r.heapProfiles != "" {
		if err := op.saveHeapProfile(r.processProfile(r.heapProfiles, ".pb.gz")); err != nil {
			return m, errors.Join(err, op.stop())
		}
	}
	return m, op.stop()
}

// processProfile is the file in dir that a profile of r's process is written to:
// <kind>-<flux|capi|reconcilekit><ext>.
func (r run) processProfile(dir, ext string) string {
	return filepath.Join(dir, strings.ToLower(r.kind.name)+"-"+peerStyles[r.impl]+ext)
}

// saveHeapProfile writes the process's heap profile, after a collection, to file.
func (p *peerProcess) saveHeapProfile(file string) error {
	body, err := p.get("/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	return os.WriteFile(file, body, 0o644)
}

// assertCurrent fails unless kstatus reads every object of k as Current: the status each
// implementation writes must mean to kstatus (kubectl wait, Flux, Argo CD) what it means to
// the benchmark's observer before its time counts. The observer requires it of each object
// as it converges; an operator still at work when the last one did (a reconcile in flight
// that marks an object in progress again) is given settle to leave every object Current,
// and how long it took is printed.
func assertCurrent(ctx context.Context, c client.Client, k *kind) error {
	gvk, err := apiutil.GVKForObject(k.object("", ""), c.Scheme())
	if err != nil {
		return err
	}
	const settle = 30 * time.Second
	start := time.Now()
	for look := 0; ; look++ {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return err
		}
		var wrong []string
		for i := range list.Items {
			res, err := kstatus.Compute(&list.Items[i])
			switch {
			case err != nil:
				wrong = append(wrong, fmt.Sprintf("%s: %v", list.Items[i].GetName(), err))
			case res.Status != kstatus.CurrentStatus:
				status, _, _ := unstructured.NestedMap(list.Items[i].Object, "status")
				wrong = append(wrong, fmt.Sprintf("%s: %s (%s), generation %d, status %v", list.Items[i].GetName(), res.Status, res.Message, list.Items[i].GetGeneration(), status))
			}
		}
		switch {
		case len(wrong) == 0 && look > 0:
			fmt.Fprintf(os.Stderr, "  %s: every object read Current to kstatus %s after converging\n", k.name, time.Since(start).Round(100*time.Millisecond))
			return nil
		case len(wrong) == 0:
			return nil
		case time.Since(start) > settle:
			return fmt.Errorf("kstatus does not read %d of %d converged %ss as Current %s after they converged: %s",
				len(wrong), len(list.Items), k.name, settle, strings.Join(wrong[:min(len(wrong), 3)], "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
