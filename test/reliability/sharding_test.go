package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	atv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
	"github.com/reconcilekit/reconcilekit/sharding"
)

// The sharding scenarios run the At operator's own binary, built from cmd/main.go, as
// separate processes, so that a replica can be killed with SIGKILL; each replica's log
// lines of the reconciles it ran (sharding's V(1) "Reconcile started" and "Reconcile
// finished") make a ledger of who reconciled what, and when.

// atRing is the ring examples/at/cmd/main.go shards its Ats in.
const atRing = "at-operator"

// shardLeaseDuration is controller-runtime's default lease duration, which the At
// manager's shard Leases use.
const shardLeaseDuration = 15 * time.Second

// shardedObjects is how many Ats a sharding scenario creates at a time.
func shardedObjects() int {
	if *shardedAts > 0 {
		return *shardedAts
	}
	if *full {
		return 1000
	}
	return 30
}

// buildAt builds the At manager's binary once for the test.
func buildAt(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "at-manager")
	// The example builds in the examples' module, with its requirements.
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./at/cmd")
	cmd.Dir = "../../examples"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("building the At manager: %v\n%s", err, out)
	}
	return bin
}

// shardedKubeconfig writes a kubeconfig for the At operator's user bound to what
// examples/at/config/sharded gives a shard, and no more: the operator's generated role,
// its leader election role in ns, and the sharded roles on top, the shard Lease role in
// ns. The scenarios prove that a shard needs nothing else.
func shardedKubeconfig(t *testing.T, admin client.Client, ns string) string {
	t.Helper()
	grantLeaderElection(t, admin, ns, atOperator)
	user := rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: atOperator.user()}
	dir := filepath.Join("..", "..", "examples", "at", "config", "sharded")

	var sharded rbacv1.ClusterRole
	readFirstDocument(t, filepath.Join(dir, "sharded_role.yaml"), &sharded)
	sharded.Name += "-" + ns // the scenarios share the cluster
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sharded.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: sharded.Name},
		Subjects:   []rbacv1.Subject{user},
	}
	if err := errors.Join(admin.Create(t.Context(), &sharded), admin.Create(t.Context(), binding)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Delete(context.Background(), binding)
		_ = admin.Delete(context.Background(), &sharded)
	})

	var leases rbacv1.Role
	readFirstDocument(t, filepath.Join(dir, "shard_lease_role.yaml"), &leases)
	leases.Namespace = ns
	leaseBinding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leases.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leases.Name},
		Subjects:   []rbacv1.Subject{user},
	}
	if err := errors.Join(admin.Create(t.Context(), &leases), admin.Create(t.Context(), leaseBinding)); err != nil {
		t.Fatal(err)
	}
	// Bound last, so that once it takes effect the bindings before it have too.
	return kubeconfigFor(t, atOperator.config(t))
}

// readFirstDocument decodes the first YAML document of path into obj.
func readFirstDocument(t *testing.T, path string, obj any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n---\n")
	if err := yaml.Unmarshal([]byte(first), obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// kubeconfigFor writes a kubeconfig for cfg's user.
func kubeconfigFor(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["cp"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile, Token: cfg.BearerToken,
	}
	kc.Contexts["cp"] = &clientcmdapi.Context{Cluster: "cp", AuthInfo: "user"}
	kc.CurrentContext = "cp"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// interval is one reconcile of one object by one replica; end is zero while it runs, or
// if the replica was killed during it.
type interval struct {
	replica    string
	start, end time.Time
}

// reconcileLedger gathers the reconciles every replica logs, by object.
type reconcileLedger struct {
	mu      sync.Mutex
	byObj   map[types.NamespacedName][]interval
	killed  map[string]time.Time // replica to when it was killed
	drained map[string]int       // drains acknowledged, by namespace: replicas see them all
	// assigners are the replicas that ran the assigner, in turn.
	assigners []string
	// strays counts the children the replicas let go of because their owner was not
	// theirs (sharding's repair of a child left behind in a handover).
	strays int
	// tails are each replica's last log lines other than the ledger's, for a failure to
	// show what the replicas were doing.
	tails map[string][]string
}

// tailLines is how many of its last log lines the ledger keeps of each replica.
const tailLines = 15

// record reads a replica's JSON log lines until the replica's output ends.
func (l *reconcileLedger) record(replica string, out io.Reader, logs io.Writer) {
	scanner := bufio.NewScanner(out)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Bytes()
		if logs != nil {
			fmt.Fprintf(logs, "%s: %s\n", replica, line)
		}
		var entry struct {
			Msg       string `json:"msg"`
			Shard     string `json:"shard"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
			Time      string `json:"time"`
		}
		if json.Unmarshal(line, &entry) != nil {
			continue
		}
		if entry.Msg != "Reconcile started" && entry.Msg != "Reconcile finished" {
			l.mu.Lock()
			tail := append(l.tails[replica], string(line))
			l.tails[replica] = tail[max(0, len(tail)-tailLines):]
			l.mu.Unlock()
		}
		if entry.Msg == "Let go of a child whose owner is not this shard's" {
			l.mu.Lock()
			l.strays++
			l.mu.Unlock()
		}
		if entry.Msg == "Assigning objects to shards" {
			l.mu.Lock()
			l.assigners = append(l.assigners, replica)
			l.mu.Unlock()
		}
		if entry.Shard == "" {
			continue
		}
		key := types.NamespacedName{Namespace: entry.Namespace, Name: entry.Name}
		when, _ := time.Parse(time.RFC3339Nano, entry.Time)
		l.mu.Lock()
		switch entry.Msg {
		case "Reconcile started":
			l.byObj[key] = append(l.byObj[key], interval{replica: entry.Shard, start: when})
		case "Reconcile finished":
			ivs := l.byObj[key]
			for i := len(ivs) - 1; i >= 0; i-- {
				if ivs[i].replica == entry.Shard && ivs[i].end.IsZero() {
					ivs[i].end = when
					break
				}
			}
		case "Drained":
			l.drained[entry.Namespace]++
		}
		l.mu.Unlock()
	}
}

// overlaps returns every object of ns that two replicas reconciled at overlapping times,
// and how many reconciles of ns there were. A reconcile a killed replica never finished
// lasts until the kill; one still running lasts until now.
func (l *reconcileLedger) overlaps(ns string) (found []string, total, unfinished int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for key, ivs := range l.byObj {
		if key.Namespace != ns {
			continue
		}
		total += len(ivs)
		ivs = slices.Clone(ivs)
		for i := range ivs {
			if ivs[i].end.IsZero() {
				ivs[i].end = now
				if k, ok := l.killed[ivs[i].replica]; ok {
					ivs[i].end = k
				} else {
					unfinished++
				}
			}
		}
		slices.SortFunc(ivs, func(a, b interval) int { return a.start.Compare(b.start) })
		for i := 1; i < len(ivs); i++ {
			for j := range i {
				if ivs[j].replica != ivs[i].replica && ivs[i].start.Before(ivs[j].end) {
					found = append(found, fmt.Sprintf("%s by %s from %s to %s and by %s from %s", key.Name,
						ivs[j].replica, ivs[j].start.Format(time.StampMicro), ivs[j].end.Format(time.StampMicro),
						ivs[i].replica, ivs[i].start.Format(time.StampMicro)))
				}
			}
		}
	}
	return found, total, unfinished
}

// firstAfter returns when replica other than skip first started reconciling key after t.
func (l *reconcileLedger) firstAfter(key types.NamespacedName, skip string, t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, iv := range l.byObj[key] {
		if iv.replica != skip && iv.start.After(t) {
			return iv.start, true
		}
	}
	return time.Time{}, false
}

// replicaProcess is one running At manager.
type replicaProcess struct {
	name     string
	cmd      *exec.Cmd
	metrics  reconciletest.Endpoint
	pprof    string // the address of its profiles
	profiles int    // heap profiles written, with -heap-profiles
	done     chan struct{}
	output   sync.WaitGroup
}

// startReplica starts the At manager as shard name, its Lease in ns, as
// examples/at/config/sharded does; unsharded when name is empty (as "single"), with
// leader election in ns.
func startReplica(t *testing.T, bin, kubeconfig, ns, name string, ledger *reconcileLedger) *replicaProcess {
	t.Helper()
	metrics, pprof := reconciletest.FreeAddress(t), reconciletest.FreeAddress(t)
	label := name
	args := []string{
		"-leader-election-namespace=" + ns,
		"-metrics-bind-address=" + metrics, "-metrics-secure=false",
		"-pprof-bind-address=" + pprof,
		"-health-probe-bind-address=0",
		// Every V(1) line: at V(1) the logger samples repeated messages (100 a second,
		// then one in 100), which would leave holes in the ledger; from V(2) it does not.
		"-zap-log-level=2",
	}
	if name != "" {
		args = append(args, "-shard="+name)
	} else {
		args, label = append(args, "-leader-elect"), "single"
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if *heapProfiles != "" {
		// Only the replicas: the whole test run sampled this finely is several times slower.
		cmd.Env = append(cmd.Env, "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",memprofilerate=4096", ","))
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting replica %s: %v", label, err)
	}
	r := &replicaProcess{name: label, cmd: cmd, metrics: reconciletest.Endpoint{URL: "http://" + metrics + "/metrics"}, pprof: pprof, done: make(chan struct{})}
	var echo io.Writer
	if *logs {
		echo = os.Stderr
	}
	r.output.Go(func() { ledger.record(label, out, echo) })
	go func() {
		r.output.Wait()
		_ = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() { r.kill() })
	return r
}

// stop ends the replica with SIGTERM, as a rollout does, and waits for it to exit.
func (r *replicaProcess) stop(t *testing.T) {
	t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
		if code := r.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("replica %s exited with %d after SIGTERM", r.name, code)
		}
	case <-time.After(time.Minute):
		t.Errorf("replica %s did not stop within a minute of SIGTERM", r.name)
		r.kill()
	}
}

// kill ends the replica with SIGKILL and waits until it is gone.
func (r *replicaProcess) kill() {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Kill()
	<-r.done
}

// heap returns the replica's live heap: what the collection that its heap profile's gc=1
// forces found in use (the Go runtime's /gc/heap/live:bytes, which controller-runtime
// exports). The heap in use at any other moment holds garbage too, up to as much again in
// an idle process, and so does it right after the forced collection, from building the
// profile. The least of three readings leaves out a reconcile that happened to run.
func (r *replicaProcess) heap(t *testing.T) float64 {
	t.Helper()
	// Up once its metrics answer.
	await(t, time.Minute, func(ctx context.Context) error {
		_, err := r.metrics.Scrape(ctx)
		return err
	})
	least := 0.0
	for range 3 {
		profile := io.Discard
		if *heapProfiles != "" {
			r.profiles++
			f, err := os.Create(filepath.Join(*heapProfiles, fmt.Sprintf("%s-%d.pb.gz", r.name, r.profiles)))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			profile = f
		}
		if err := collectGarbage(t.Context(), r.pprof, profile); err != nil {
			t.Fatalf("collecting replica %s's garbage: %v", r.name, err)
		}
		v, ok := r.metrics.Read(t).Sum("go_gc_heap_live_bytes", nil)
		if !ok {
			t.Fatalf("replica %s's metrics have no go_gc_heap_live_bytes", r.name)
		}
		if least == 0 || v < least {
			least = v
		}
		time.Sleep(time.Second)
	}
	return least
}

// collectGarbage makes the process serving Go's profiles at addr collect its garbage,
// through its heap profile's gc=1, and copies the profile to w.
func collectGarbage(ctx context.Context, addr string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", req.URL, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// podCreations counts, by name, the distinct pods ns has seen, from a watch that starts
// before the operator does: a pod deleted and created again counts twice.
type podCreations struct {
	mu   sync.Mutex
	uids map[string]map[types.UID]bool
}

func watchPodCreations(t *testing.T, ns string) *podCreations {
	t.Helper()
	p := &podCreations{uids: map[string]map[types.UID]bool{}}
	c, err := cache.New(cp.Config, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	informer, err := c.GetInformer(t.Context(), &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		pod := obj.(*corev1.Pod)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.uids[pod.Name] == nil {
			p.uids[pod.Name] = map[types.UID]bool{}
		}
		p.uids[pod.Name][pod.UID] = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c, "the pod watch")
	return p
}

// check fails the test for every pod created more than once and returns how many pods
// were created.
func (p *podCreations) check(t *testing.T) int {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	total := 0
	for name, uids := range p.uids {
		total += len(uids)
		if len(uids) > 1 {
			t.Errorf("pod %s was created %d times", name, len(uids))
		}
	}
	return total
}

// placedOn returns nil once every At of ns is labelled, not draining, for the shard the
// ring of shards gives it, with its pod labelled alike.
func placedOn(ctx context.Context, c client.Client, ns string, shards ...string) error {
	misplaced, total, err := misplacedAts(ctx, c, ns, shards...)
	if err != nil {
		return err
	}
	if len(misplaced) > 0 {
		return fmt.Errorf("%d of %d Ats are not on their shards of %v, among them %s", len(misplaced), total, shards, strings.Join(misplaced[:min(3, len(misplaced))], "; "))
	}
	return nil
}

// misplacedAts describes every At of ns that is not placedOn shards, and counts the Ats.
func misplacedAts(ctx context.Context, c client.Client, ns string, shards ...string) ([]string, int, error) {
	ring := sharding.NewRing(shards...)
	var ats atv1alpha1.AtList
	if err := c.List(ctx, &ats, client.InNamespace(ns)); err != nil {
		return nil, 0, err
	}
	pods, err := pods(ctx, c, ns)
	if err != nil {
		return nil, 0, err
	}
	podShard := map[string]string{}
	for _, p := range pods {
		podShard[p.Name] = p.Labels[sharding.LabelShard(atRing)]
	}
	var misplaced []string
	for _, a := range ats.Items {
		want := ring.Shard(sharding.Key(atv1alpha1.GroupVersion.Group, "At", ns, a.Name))
		got, drain := a.Labels[sharding.LabelShard(atRing)], a.Labels[sharding.LabelDrain(atRing)]
		pod, hasPod := podShard[a.Name]
		if got != want || drain != "" || (hasPod && pod != want) {
			podIs := "no pod"
			if hasPod {
				podIs = fmt.Sprintf("pod on %q", pod)
			}
			misplaced = append(misplaced, fmt.Sprintf("%s on %q (drain %q, %s, phase %q), want %q", a.Name, got, drain, podIs, a.Status.Phase, want))
		}
	}
	return misplaced, len(ats.Items), nil
}

// shardsOf returns the shard each At of ns is labelled for.
func shardsOf(t *testing.T, c client.Client, ns string) map[types.NamespacedName]string {
	t.Helper()
	var ats atv1alpha1.AtList
	if err := c.List(t.Context(), &ats, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	m := map[types.NamespacedName]string{}
	for _, a := range ats.Items {
		m[client.ObjectKeyFromObject(&a)] = a.Labels[sharding.LabelShard(atRing)]
	}
	return m
}

// checkLedger fails the test for every object of ns two replicas reconciled at once.
func checkLedger(t *testing.T, l *reconcileLedger, ns string) int {
	t.Helper()
	found, total, unfinished := l.overlaps(ns)
	// Running still, or a line lost: either way counted as lasting until now, which
	// can only add overlaps, never hide one.
	t.Logf("%d reconciles of replicas not killed had no end in the ledger", unfinished)
	for i, f := range found {
		if i == 10 {
			t.Errorf("and %d more overlaps", len(found)-i)
			break
		}
		t.Errorf("reconciled by two replicas at once: %s", f)
	}
	return total
}

func newReconcileLedger() *reconcileLedger {
	return &reconcileLedger{byObj: map[types.NamespacedName][]interval{}, killed: map[string]time.Time{}, drained: map[string]int{}, tails: map[string][]string{}}
}

// The Ats a scenario creates are due within a few seconds, so that their pods start
// while replicas come and go.
func createAts(t *testing.T, c client.Client, ns, prefix string, n int) {
	t.Helper()
	atOperator.create(t, c, ns, prefix, n)
}

// shardedRun is what a sharding scenario runs in: its namespace, the At manager's binary,
// the Ats' statuses and pods watched, and the ledger of every replica's reconciles.
type shardedRun struct {
	limit      time.Duration
	n          int // Ats a batch
	bin        string
	kubeconfig string
	admin      client.Client
	ns         string
	created    *podCreations
	ledger     *reconcileLedger
	replicas   []*replicaProcess // every replica started, in order
}

func shardedSetup(t *testing.T) *shardedRun {
	t.Helper()
	ns := cp.RestrictedNamespace(t)
	watchStatus(t, ns, atOperator)
	admin := cp.Client(t, scheme)
	// The At manager caches Ats in every namespace, and the scenarios share the ring's
	// name and the shards' names: the Ats an earlier scenario left behind, their
	// namespace still being deleted, would be the shards' to move too (thousands, after
	// the kill scenario), and the load of moving them made the rebalance scenario's
	// Leases look expired to one replica. Each scenario starts once the Ats of earlier
	// sharding scenarios are gone; the few of other scenarios do not weigh.
	await(t, sized().limit, func(ctx context.Context) error {
		var ats metav1.PartialObjectMetadataList
		ats.SetGroupVersionKind(atv1alpha1.GroupVersion.WithKind("AtList"))
		if err := admin.List(ctx, &ats); err != nil {
			return err
		}
		left := slices.DeleteFunc(ats.Items, func(at metav1.PartialObjectMetadata) bool {
			return !strings.HasPrefix(at.Namespace, "testsharded")
		})
		if len(left) > 0 {
			return fmt.Errorf("%d Ats of earlier sharding scenarios are not deleted yet, among them %s/%s",
				len(left), left[0].Namespace, left[0].Name)
		}
		return nil
	})
	return &shardedRun{
		limit: sized().limit, n: shardedObjects(), bin: buildAt(t), kubeconfig: shardedKubeconfig(t, admin, ns),
		admin: admin, ns: ns, created: watchPodCreations(t, ns), ledger: newReconcileLedger(),
	}
}

// start starts a replica as shard name, unsharded when name is empty.
func (r *shardedRun) start(t *testing.T, name string) *replicaProcess {
	t.Helper()
	p := startReplica(t, r.bin, r.kubeconfig, r.ns, name, r.ledger)
	r.replicas = append(r.replicas, p)
	return p
}

// settle waits until every At is placed on shards and converged, and returns how long
// that took.
func (r *shardedRun) settle(t *testing.T, shards ...string) time.Duration {
	t.Helper()
	began := time.Now()
	awaitExplained(t, r.limit, func(ctx context.Context) error {
		if err := placedOn(ctx, r.admin, r.ns, shards...); err != nil {
			return err
		}
		return converged(ctx, r.admin, r.ns, atOperator)
	}, func(ctx context.Context) string { return r.explain(ctx, shards...) })
	return time.Since(began)
}

// explainSample is how many Ats of each kind of laggard a timed-out wait describes.
const explainSample = 10

// explain describes, for a sharding wait that timed out, what it waited for: the Ats not
// placed on their shards of shards or not converged (how many, and a sample with their
// labels and their pods'), the shard Leases, which replica assigns, and what every
// replica was doing last.
func (r *shardedRun) explain(ctx context.Context, shards ...string) string {
	var b strings.Builder
	misplaced, total, err := misplacedAts(ctx, r.admin, r.ns, shards...)
	if err != nil {
		fmt.Fprintf(&b, "listing the Ats: %v\n", err)
	}
	fmt.Fprintf(&b, "%d of %d Ats not placed on their shards of %v", len(misplaced), total, shards)
	for _, m := range misplaced[:min(explainSample, len(misplaced))] {
		fmt.Fprintf(&b, "\n  %s", m)
	}
	unconverged, err := atsUnconverged(ctx, r.admin, r.ns)
	if err != nil {
		fmt.Fprintf(&b, "\nlisting the Ats: %v", err)
	}
	fmt.Fprintf(&b, "\n%d of %d Ats not converged", len(unconverged), total)
	for _, u := range unconverged[:min(explainSample, len(unconverged))] {
		fmt.Fprintf(&b, "\n  %s", u)
	}

	var leases coordinationv1.LeaseList
	if err := r.admin.List(ctx, &leases, client.InNamespace(r.ns), client.MatchingLabels{sharding.LabelRing: atRing}); err != nil {
		fmt.Fprintf(&b, "\nlisting the shard Leases: %v", err)
	}
	live, _ := sharding.Live(leases.Items, time.Now())
	fmt.Fprintf(&b, "\nlive shards %v; shard Leases:", live)
	for _, l := range leases.Items {
		holder, renewed, duration := "", "never", int32(0)
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		if l.Spec.RenewTime != nil {
			renewed = time.Since(l.Spec.RenewTime.Time).Round(100*time.Millisecond).String() + " ago"
		}
		if l.Spec.LeaseDurationSeconds != nil {
			duration = *l.Spec.LeaseDurationSeconds
		}
		fmt.Fprintf(&b, "\n  %s: holder %q, renewed %s, for %ds", l.Name, holder, renewed, duration)
	}

	// Copied, so that the replicas' output is not held up while their metrics are read.
	r.ledger.mu.Lock()
	assigners, tails := slices.Clone(r.ledger.assigners), maps.Clone(r.ledger.tails)
	r.ledger.mu.Unlock()
	fmt.Fprintf(&b, "\nassigning, in turn: %v", assigners)
	for _, p := range r.replicas {
		state := "running"
		select {
		case <-p.done:
			state = "exited: " + p.cmd.ProcessState.String()
		default:
		}
		fmt.Fprintf(&b, "\nreplica %s, %s", p.name, state)
		if state == "running" {
			// What sharding's metrics say: whether it assigns, what waits for a shard.
			if scrape, err := p.metrics.Scrape(ctx); err != nil {
				fmt.Fprintf(&b, "; its metrics: %v", err)
			} else {
				for _, name := range []string{sharding.MetricAssigning, sharding.MetricUnassigned, sharding.MetricUnassignedOldest, sharding.MetricChildrenReleased} {
					v, _ := scrape.Sum(name, nil)
					fmt.Fprintf(&b, "; %s %v", strings.TrimPrefix(name, "reconcilekit_sharding_"), v)
				}
			}
		}
		fmt.Fprintf(&b, "; its last lines:")
		for _, line := range tails[p.name] {
			fmt.Fprintf(&b, "\n  %s", line)
		}
	}
	return b.String()
}

// assigner returns the replica that last started assigning.
func (r *shardedRun) assigner() string {
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	if len(r.ledger.assigners) == 0 {
		return ""
	}
	return r.ledger.assigners[len(r.ledger.assigners)-1]
}

// killOne kills victim with SIGKILL and waits until survivors have every At, each of
// the victim's reconciled by one of them; it returns how many Ats the victim had, and
// how long after the kill the first and the last of them were reconciled.
func (r *shardedRun) killOne(t *testing.T, victim *replicaProcess, survivors ...string) (int, time.Duration, time.Duration) {
	t.Helper()
	var theirs []types.NamespacedName
	for key, shard := range shardsOf(t, r.admin, r.ns) {
		if shard == victim.name {
			theirs = append(theirs, key)
		}
	}
	killed := time.Now()
	victim.kill()
	r.ledger.mu.Lock()
	r.ledger.killed[victim.name] = killed
	r.ledger.mu.Unlock()
	var first, last time.Duration
	awaitExplained(t, r.limit, func(ctx context.Context) error {
		first, last = 0, 0
		for _, key := range theirs {
			at, ok := r.ledger.firstAfter(key, victim.name, killed)
			if !ok {
				return fmt.Errorf("no survivor has reconciled %s yet", key.Name)
			}
			if took := at.Sub(killed); first == 0 || took < first {
				first = took
			}
			last = max(last, at.Sub(killed))
		}
		return placedOn(ctx, r.admin, r.ns, survivors...)
	}, func(ctx context.Context) string { return r.explain(ctx, survivors...) })
	// The first At moves once the Lease has expired and the assigner has seen it; the
	// rest follow as fast as the assigner's patches and the survivors' reconciles go,
	// which on a busy machine is a matter of its load, reported rather than judged.
	if limit := shardLeaseDuration + 10*time.Second; first > limit {
		t.Errorf("the first At of killed %s was reconciled by another %v after the kill; want at most %v", victim.name, first, limit)
	}
	return len(theirs), first, last
}

func TestShardedReplicasSplitTheObjectsAndTakeOverAKilledOnesShare(t *testing.T) {
	r := shardedSetup(t)
	n := r.n

	// One unsharded replica, as the operator runs today: its heap is the yardstick; its
	// heap before there is any At is what every process pays whatever its share.
	single := r.start(t, "")
	idleHeap := single.heap(t)
	createAts(t, r.admin, r.ns, "first", n)
	await(t, r.limit, func(ctx context.Context) error { return converged(ctx, r.admin, r.ns, atOperator) })
	singleHeap := single.heap(t)
	single.stop(t)

	// Three shards take the same objects over, started one after another, as a rollout
	// starts them: the first assigns Ats and their pods to itself until it sees the
	// others, then drains two thirds of them to the others, while its watch of pods may
	// still be behind with those it was given (issue 34: such a pod stayed behind).
	names := []string{"replica-0", "replica-1", "replica-2"}
	replicas := map[string]*replicaProcess{}
	replicas[names[0]] = r.start(t, names[0])
	await(t, r.limit, func(ctx context.Context) error {
		var ats atv1alpha1.AtList
		if err := r.admin.List(ctx, &ats, client.InNamespace(r.ns), client.MatchingLabels{sharding.LabelShard(atRing): names[0]}, client.Limit(1)); err != nil {
			return err
		}
		if len(ats.Items) == 0 {
			return fmt.Errorf("%s has assigned no At to itself", names[0])
		}
		return nil
	})
	for _, name := range names[1:] {
		replicas[name] = r.start(t, name)
	}
	r.settle(t, names...)
	shares := map[string]int{}
	for _, shard := range shardsOf(t, r.admin, r.ns) {
		shares[shard]++
	}
	var heaps []string
	for _, name := range names {
		heaps = append(heaps, fmt.Sprintf("%s %.1f MiB (%d of %d Ats)", name, replicas[name].heap(t)/(1<<20), shares[name], n))
	}

	// New Ats go to their shards and run there.
	createAts(t, r.admin, r.ns, "second", n)
	r.settle(t, names...)

	// SIGKILL a shard that does not assign: its Lease expires and the others take its
	// Ats over; then they run new ones.
	assigner := r.assigner()
	if !slices.Contains(names, assigner) {
		t.Fatalf("the assigner is %q, not one of the shards %v", assigner, names)
	}
	var plain string
	for _, name := range names {
		if name != assigner {
			plain = name
		}
	}
	survivors := slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == plain })
	plainAts, plainFirst, plainLast := r.killOne(t, replicas[plain], survivors...)
	createAts(t, r.admin, r.ns, "third", n)
	r.settle(t, survivors...)

	// SIGKILL the shard that assigns: the next live shard, warm, takes the assigning
	// over when the Lease expires, and moves the killed one's Ats with it.
	last := slices.DeleteFunc(slices.Clone(survivors), func(s string) bool { return s == assigner })
	assignerAts, assignerFirst, assignerLast := r.killOne(t, replicas[assigner], last...)
	createAts(t, r.admin, r.ns, "fourth", n)
	r.settle(t, last...)

	reconciles := checkLedger(t, r.ledger, r.ns)
	pods := r.created.check(t)
	r.ledger.mu.Lock()
	assigners, strays := slices.Clone(r.ledger.assigners), r.ledger.strays
	r.ledger.mu.Unlock()
	t.Logf("the assigner ran on %v in turn; %s, then the assigning %s were killed; %d children let go by a shard that was not their owner's", assigners, plain, assigner, strays)
	t.Logf("%d Ats: one unsharded replica's heap with no At: %.1f MiB, with the first %d: %.1f MiB; three shards: %s; SIGKILL of a plain shard: its %d Ats reconciled by the others from %v to %v after; SIGKILL of the assigning shard: its %d Ats from %v to %v after (lease %v); %d reconciles in the ledger, none overlapping; %d At pods created for %d Ats",
		4*n, idleHeap/(1<<20), n, singleHeap/(1<<20), strings.Join(heaps, ", "),
		plainAts, plainFirst.Round(100*time.Millisecond), plainLast.Round(100*time.Millisecond),
		assignerAts, assignerFirst.Round(100*time.Millisecond), assignerLast.Round(100*time.Millisecond),
		shardLeaseDuration, reconciles, pods, 4*n)
}

func TestShardedReplicasRebalanceAsTheyScaleFrom3To5To2(t *testing.T) {
	r := shardedSetup(t)
	n := r.n

	replicas := map[string]*replicaProcess{}
	scale := func(names ...string) {
		t.Helper()
		for name, p := range replicas {
			if !slices.Contains(names, name) {
				p.stop(t)
				delete(replicas, name)
			}
		}
		for _, name := range names {
			if replicas[name] == nil {
				replicas[name] = r.start(t, name)
			}
		}
	}

	three := []string{"replica-0", "replica-1", "replica-2"}
	five := append(slices.Clone(three), "replica-3", "replica-4")
	two := []string{"replica-3", "replica-4"}

	createAts(t, r.admin, r.ns, "first", n)
	scale(three...)
	r.settle(t, three...)
	before := shardsOf(t, r.admin, r.ns)

	// Two more join while new Ats come due: each moved At is drained first.
	createAts(t, r.admin, r.ns, "second", n)
	scale(five...)
	up := r.settle(t, five...)
	moved := 0
	for key, shard := range shardsOf(t, r.admin, r.ns) {
		if old, ok := before[key]; ok && old != shard {
			moved++
		}
	}

	// Three leave with SIGTERM, the assigning one among them, each releasing its Lease
	// once its reconciles end.
	createAts(t, r.admin, r.ns, "third", n)
	scale(two...)
	down := r.settle(t, two...)

	reconciles := checkLedger(t, r.ledger, r.ns)
	pods := r.created.check(t)
	r.ledger.mu.Lock()
	drained := r.ledger.drained[r.ns]
	assigners, strays := slices.Clone(r.ledger.assigners), r.ledger.strays
	r.ledger.mu.Unlock()
	t.Logf("the assigner ran on %v in turn; %d children let go by a shard that was not their owner's", assigners, strays)
	t.Logf("%d Ats: 3 -> 5 replicas moved %d of the first %d (%d drains acknowledged) and settled in %v; 5 -> 2 settled in %v; %d reconciles in the ledger, none overlapping; %d At pods created for %d Ats",
		3*n, moved, n, drained, up.Round(100*time.Millisecond), down.Round(100*time.Millisecond), reconciles, pods, 3*n)
}
