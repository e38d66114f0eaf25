package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options configure a control plane.
type Options struct {
	// CRDDirectories hold CustomResourceDefinition manifests, installed before Start
	// returns. A directory that does not exist is an error.
	CRDDirectories []string

	// Nodes is the number of simulated nodes. Zero starts the API server alone; one or
	// more start a full cluster, each node with room for 1000 pods.
	Nodes int

	// APIServerFlags are more flags for kube-apiserver, by name without the dashes, for a
	// control plane that must differ from a production one's defaults, such as
	// {"watch-cache": "false"} to send every watch to etcd.
	APIServerFlags map[string]string

	// Output receives the output of every process, to debug the control plane itself;
	// nil discards it. A component that fails to start reports its last output anyway.
	Output io.Writer
}

// ControlPlane is a running API server, and with nodes a running cluster.
type ControlPlane struct {
	// Config is an administrator's config for the API server, unthrottled.
	Config *rest.Config

	dir       string // everything on disk: etcd's data, certificates, kubeconfig, stages
	auditLog  string // the API server's audit log, in dir
	watchdog  *watchdog
	env       *envtest.Environment
	processes []*process    // the components started after the API server
	client    client.Client // an administrator's

	stopOnce sync.Once
	users    sync.Mutex // envtest's AddUser signs with a serial number it does not guard
	stopErr  error
}

// Start starts a control plane as opts say and returns when it is ready: CRDs
// established and, for a cluster, every node Ready. The caller must Stop it. ctx bounds
// the start only.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("controlplane: Options.Nodes is %d; want 0 for an API server alone, more for a cluster", opts.Nodes)
	}
	binaries := apiServerBinaries
	if opts.Nodes > 0 {
		binaries = clusterBinaries
	}
	bin, err := findBinaries(binaries)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "controlplane-")
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	cp := &ControlPlane{dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, cp.Stop())
		}
	}()
	if cp.watchdog, err = startWatchdog(dir); err != nil {
		return nil, err
	}
	if opts.Output != nil {
		opts.Output = &syncWriter{w: opts.Output}
	}
	if err := cp.startAPIServer(bin, opts); err != nil {
		return nil, err
	}
	if opts.Nodes > 0 {
		if err := cp.startCluster(ctx, bin, opts); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// apiServerStarts is how many times startAPIServer tries: envtest picks free ports by
// binding and releasing them, so on a busy machine another process can take one before
// etcd or kube-apiserver binds it, and the component exits at start or soon after.
const apiServerStarts = 3

// startAPIServer starts etcd and kube-apiserver through envtest and installs the CRDs,
// starting again on new ports if a component fails on the way; the error of the last try
// quotes the last output of etcd and kube-apiserver.
func (cp *ControlPlane) startAPIServer(bin string, opts Options) error {
	for _, dir := range opts.CRDDirectories {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("controlplane: CRD directory: %w", err)
		}
	}
	var errs []error
	for try := 1; try <= apiServerStarts; try++ {
		err := cp.tryAPIServer(bin, opts, try)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("try %d of %d: %w", try, apiServerStarts, err))
		if cp.env != nil {
			errs = append(errs, cp.stopEnv())
			cp.env = nil
		}
	}
	return fmt.Errorf("controlplane: starting the API server: %w", errors.Join(errs...))
}

// tryAPIServer makes one try of startAPIServer, in directories of its own.
func (cp *ControlPlane) tryAPIServer(bin string, opts Options, try int) error {
	dir := filepath.Join(cp.dir, fmt.Sprintf("start-%d", try))
	etcdDir, certDir := filepath.Join(dir, "etcd"), filepath.Join(dir, "apiserver")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	var etcdOut, apiServerOut tail
	cp.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			Etcd: &envtest.Etcd{
				Path:    filepath.Join(bin, "etcd"),
				DataDir: etcdDir,
				Out:     teeTo(&etcdOut, opts.Output),
				Err:     teeTo(&etcdOut, opts.Output),
			},
			APIServer: &envtest.APIServer{
				Path:    filepath.Join(bin, "kube-apiserver"),
				CertDir: certDir,
				Out:     teeTo(&apiServerOut, opts.Output),
				Err:     teeTo(&apiServerOut, opts.Output),
			},
		},
		CRDDirectoryPaths:     opts.CRDDirectories,
		ErrorIfCRDPathMissing: true,
		// envtest's 20 s is short for a busy machine.
		ControlPlaneStartTimeout: time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	// A test's etcd need not survive a crash of the machine, only of itself, and the
	// page cache keeps what it wrote: fsync only makes it slow on a busy disk.
	cp.env.ControlPlane.Etcd.Configure().Set("unsafe-no-fsync", "true")
	// As hardened clusters do: setting blockOwnerDeletion then needs update on the owner's
	// finalizers, so an operator's role is tested against that rule too.
	cp.env.ControlPlane.APIServer.Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	// envtest's range holds 254 Services; a benchmark of 10000 Memcacheds needs as many.
	cp.env.ControlPlane.APIServer.Configure().Set("service-cluster-ip-range", "10.0.0.0/16")
	var err error
	cp.auditLog, err = auditFlags(dir, func(name, value string) { cp.env.ControlPlane.APIServer.Configure().Set(name, value) })
	if err != nil {
		return err
	}
	for name, value := range opts.APIServerFlags {
		cp.env.ControlPlane.APIServer.Configure().Set(name, value)
	}
	beforeTry(try, cp.env)

	var cfg *rest.Config
	err = cp.guardChildrenDuring(func() (err error) {
		cfg, err = cp.env.Start()
		return err
	})
	if err != nil {
		return fmt.Errorf("%w\netcd's last output:\n%s\nkube-apiserver's last output:\n%s", err, etcdOut.String(), apiServerOut.String())
	}

	cp.Config = rest.CopyConfig(cfg)
	cp.Config.QPS, cp.Config.Burst = -1, 0 // unthrottled: the server is the program's alone
	cp.client, err = client.New(cp.Config, client.Options{})
	return err
}

// stopEnv stops the API server and then kills etcd rather than asking it to stop: its
// data is thrown away, so nothing is gained by letting it flush, and on a busy disk its
// orderly stop once outlasted envtest's minute and failed a test that had passed.
func (cp *ControlPlane) stopEnv() error {
	if err := cp.env.ControlPlane.APIServer.Stop(); err != nil {
		return err
	}
	return kill(filepath.Clean(cp.env.ControlPlane.Etcd.DataDir), cp.env.Stop)
}

// beforeTry lets a test change a try's environment before it starts, to take a port.
var beforeTry = func(try int, env *envtest.Environment) {}

// teeTo writes to t and, when out is not nil, to out.
func teeTo(t *tail, out io.Writer) io.Writer {
	if out == nil {
		return t
	}
	return io.MultiWriter(t, out)
}

// guardChildrenDuring runs start and meanwhile puts every child process that mentions
// the control plane's directory under the watchdog's guard: envtest starts etcd and
// kube-apiserver without telling their ids, and they need guarding from the moment
// they start.
func (cp *ControlPlane) guardChildrenDuring(start func() error) error {
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			_ = cp.guardChildren() // the last search, below, reports a broken watchdog
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := start()
	close(stop)
	<-stopped
	if err != nil {
		return err
	}
	return cp.guardChildren()
}

func (cp *ControlPlane) guardChildren() error {
	for _, pid := range childrenMentioning(cp.dir) {
		if err := cp.watchdog.guard(pid); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops every process the control plane started and removes its files. It may be
// called more than once.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		// The volumes' directories are read while the API server still answers, and
		// removed once nothing writes to them.
		volumes := cp.volumeDirectories()
		// The cluster's components first, so that none sees its API server vanish.
		errs := []error{stopProcesses(cp.processes)}
		for _, dir := range volumes {
			errs = append(errs, os.RemoveAll(dir))
		}
		if cp.env != nil {
			errs = append(errs, cp.stopEnv())
		}
		if cp.watchdog != nil {
			errs = append(errs, cp.watchdog.release())
		}
		errs = append(errs, os.RemoveAll(cp.dir))
		cp.stopErr = errors.Join(errs...)
	})
	return cp.stopErr
}

// AuditLog returns the path of the API server's audit log, in JSON lines: it records the
// answer to every request of a user who is no administrator (not in system:masters), such
// as an operator run with a config of User, and nothing of administrators, so that it costs
// nothing where only administrators ask. The API server writes an event before it sends its
// answer, so a refusal is in the log by the time the client refused hears of it. It keeps
// at most two files of 100 MB: a reader that follows the log must expect it to be rotated.
func (cp *ControlPlane) AuditLog() string { return cp.auditLog }

// User returns a config that authenticates as the user name, in no group, and is
// unthrottled: what it may do is what RBAC bindings of name grant, none at first.
func (cp *ControlPlane) User(name string) (*rest.Config, error) {
	cp.users.Lock()
	defer cp.users.Unlock()
	authenticated, err := cp.env.AddUser(envtest.User{Name: name}, &rest.Config{QPS: -1})
	if err != nil {
		return nil, fmt.Errorf("controlplane: provisioning user %s: %w", name, err)
	}
	return authenticated.Config(), nil
}

// KubeConfig returns a kubeconfig that authenticates as an administrator of the control
// plane, for kubectl and for programs run beside it (an operator's go run ./cmd), whose
// context works in namespace; empty means "default".
func (cp *ControlPlane) KubeConfig(namespace string) ([]byte, error) {
	cfg, err := clientcmd.Load(cp.env.KubeConfig)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	for _, c := range cfg.Contexts {
		c.Namespace = namespace
	}
	return clientcmd.Write(*cfg)
}

// APIServerPID returns the process id of the running kube-apiserver, for measurements
// of its own, such as its CPU time. It needs /proc, so Linux.
func (cp *ControlPlane) APIServerPID() (int, error) {
	pids := childrenMentioning(cp.env.ControlPlane.APIServer.Path)
	if len(pids) == 0 {
		return 0, errors.New("controlplane: the API server's process is not found; APIServerPID needs /proc")
	}
	return pids[0], nil
}

// PIDs returns the process id of each running component of the control plane by the name
// of its binary (etcd and kube-apiserver; for a cluster also kube-controller-manager,
// kube-scheduler and kwok), for measurements of their own, such as the CPU time each
// spends. It needs /proc, so Linux.
func (cp *ControlPlane) PIDs() map[string]int {
	pids := map[string]int{}
	for name, path := range map[string]string{"etcd": cp.env.ControlPlane.Etcd.Path, "kube-apiserver": cp.env.ControlPlane.APIServer.Path} {
		if found := childrenMentioning(path); len(found) > 0 {
			pids[name] = found[0]
		}
	}
	for _, p := range cp.processes {
		select {
		case <-p.done:
		default:
			pids[p.name] = p.cmd.Process.Pid
		}
	}
	return pids
}

// syncWriter serializes writes from the processes that share one Output.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
