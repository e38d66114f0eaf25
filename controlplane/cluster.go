package controlplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"embed"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The annotations that decide how a pod that runs once (restartPolicy Never, not owned
// by a Job) ends on a simulated node. Without them it succeeds with exit code 0 as soon
// as it runs. Their keys keep the prefix of reconciletest, where they were born, so that
// pods written for it still end as they did.
const (
	// ExitCodeAnnotation holds the exit code of the pod's containers, an integer; any
	// code but "0" makes the pod Failed, with reason Error.
	ExitCodeAnnotation = "reconciletest.reconcilekit.io/exit-code"

	// MessageAnnotation holds the containers' termination message. A failed pod
	// without one says "exited with code N".
	MessageAnnotation = "reconciletest.reconcilekit.io/message"

	// RunForAnnotation holds how long the pod runs before it ends, as a Go duration
	// ("1.5s", "2m").
	RunForAnnotation = "reconciletest.reconcilekit.io/run-for"
)

// BadImageTag is the tag of an image that a simulated node cannot pull: a pod with a
// container of such an image ("memcached:nope") stays Pending, the container waiting with
// reason ImagePullBackOff, as a kubelet reports it.
const BadImageTag = "nope"

// kwokNode is the annotation that puts a node in kwok's hands.
const kwokNode = "kwok.x-k8s.io/node"

// kwokNodes selects the nodes this package creates for kwok (node).
var kwokNodes = client.MatchingLabels{"type": "kwok"}

// stages are kwok's lifecycle stages for simulated nodes and pods: kwok's own, which
// initialize nodes, keep their leases, run pods, complete Jobs' pods and delete pods;
// pod-run-once.yaml, which completes the pods that run once outside a Job; and
// pod-image-pull-backoff.yaml, which fails to pull the images tagged BadImageTag.
//
//go:embed stages/*.yaml
var stages embed.FS

// startCluster starts the rest of a cluster around the API server: the controller
// manager, the scheduler, kwok and the nodes kwok simulates.
func (cp *ControlPlane) startCluster(ctx context.Context, bin string, opts Options) error {
	kubeconfig, err := cp.writeFiles()
	if err != nil {
		return err
	}
	controllerManagerPort, err := freePort()
	if err != nil {
		return err
	}
	schedulerPort, err := freePort()
	if err != nil {
		return err
	}

	// Every component runs unthrottled, kwok of its own accord and the others told to:
	// their default of 20 requests a second makes the controller manager, not the
	// operator under test, the bottleneck. Each serves its health on a loopback port.
	components := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{
			"--kubeconfig=" + kubeconfig,
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(controllerManagerPort),
			"--cert-dir=" + filepath.Join(cp.dir, "kube-controller-manager"),
			"--kube-api-qps=5000",
			"--kube-api-burst=10000",
			"--concurrent-deployment-syncs=50",
			"--concurrent-replicaset-syncs=50",
			"--concurrent-gc-syncs=50",
			"--concurrent-namespace-syncs=10",
			"--concurrent-job-syncs=50",
			// Claims of the default StorageClass (storageClass) get a volume of a
			// directory under /tmp, so that a StatefulSet's claims bind.
			"--enable-hostpath-provisioner",
			// The serviceaccount-token and root-ca-cert-publisher controllers need the
			// keys of the API server.
			"--service-account-private-key-file=" + filepath.Join(cp.env.ControlPlane.APIServer.CertDir, "sa-signer.key"),
			"--root-ca-file=" + filepath.Join(cp.dir, "ca.crt"),
		}},
		{"kube-scheduler", []string{
			"--config=" + filepath.Join(cp.dir, "kube-scheduler.yaml"),
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(schedulerPort),
			"--cert-dir=" + filepath.Join(cp.dir, "kube-scheduler"),
		}},
		{"kwok", []string{
			"--kubeconfig=" + kubeconfig,
			"--config=" + filepath.Join(cp.dir, "kwok.yaml"),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNode + "=fake",
			"--cidr=10.244.0.0/16",
			// Without a lease kwok refreshes a node's heartbeat only every 10 to 20
			// minutes, and the node lifecycle controller marks the node unreachable,
			// and every pod on it not ready, after 50 s.
			"--node-lease-duration-seconds=40",
		}},
	}
	for _, c := range components {
		p, err := startProcess(cp.watchdog, bin, c.name, opts.Output, c.args...)
		if err != nil {
			return err
		}
		cp.processes = append(cp.processes, p)
	}

	if err := cp.client.Create(ctx, storageClass()); err != nil {
		return fmt.Errorf("controlplane: creating the default StorageClass: %w", err)
	}
	for i := range opts.Nodes {
		if err := cp.client.Create(ctx, node(fmt.Sprintf("kwok-node-%d", i))); err != nil {
			return fmt.Errorf("controlplane: creating a node: %w", err)
		}
	}
	return cp.awaitCluster(ctx, opts.Nodes, map[string]int{
		"kube-controller-manager": controllerManagerPort,
		"kube-scheduler":          schedulerPort,
	})
}

// writeFiles writes what the components read: an administrator's kubeconfig, whose path
// it returns, the API server's CA, the scheduler's configuration and kwok's stages.
func (cp *ControlPlane) writeFiles() (kubeconfig string, err error) {
	kubeconfig = filepath.Join(cp.dir, "kubeconfig")
	scheduler := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 5000
  burst: 10000
leaderElection:
  leaderElect: false
`, kubeconfig)
	var kwok bytes.Buffer
	err = fs.WalkDir(stages, "stages", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := stages.ReadFile(path)
		kwok.WriteString("---\n")
		kwok.Write(data)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("controlplane: %w", err)
	}

	files := map[string][]byte{
		kubeconfig:                                   cp.env.KubeConfig,
		filepath.Join(cp.dir, "ca.crt"):              cp.Config.CAData,
		filepath.Join(cp.dir, "kube-scheduler.yaml"): []byte(scheduler),
		filepath.Join(cp.dir, "kwok.yaml"):           kwok.Bytes(),
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			return "", fmt.Errorf("controlplane: %w", err)
		}
	}
	return kubeconfig, nil
}

// node returns a node for kwok to simulate, roomy enough for any test.
func node(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNode: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// StorageClassName is the name of a cluster's default StorageClass: a claim of it, or of no
// class, binds at once to a new volume, a directory under /tmp that the controller manager
// creates (its hostpath provisioner, made for tests) and removes with the claim.
const StorageClassName = "hostpath"

// storageClass returns the cluster's default StorageClass.
func storageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner: "kubernetes.io/host-path",
	}
}

// clusterStartTimeout bounds the wait for a cluster to become ready; on an idle machine
// it takes a few seconds.
const clusterStartTimeout = 2 * time.Minute

// awaitCluster waits until every component is healthy and every node Ready, untainted.
func (cp *ControlPlane) awaitCluster(ctx context.Context, nodes int, ports map[string]int) error {
	// The components serve their health with certificates they sign themselves.
	insecure := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	defer insecure.CloseIdleConnections()

	var waitingFor error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, clusterStartTimeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range cp.processes {
			if err := p.exited(); err != nil {
				return false, err
			}
		}
		for name, port := range ports {
			if err := healthy(ctx, insecure, port); err != nil {
				waitingFor = fmt.Errorf("%s: %w", name, err)
				return false, nil
			}
		}
		var list corev1.NodeList
		if err := cp.client.List(ctx, &list, kwokNodes); err != nil {
			waitingFor = err
			return false, nil
		}
		ready := 0
		for _, n := range list.Items {
			// A node is ready for pods once its not-ready taint is gone too, moments after
			// its Ready condition: a pod created in between fails to schedule once, with
			// a Warning event that a test reading events would see.
			untainted := !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && untainted {
					ready++
				}
			}
		}
		waitingFor = fmt.Errorf("%d of %d nodes are Ready", ready, nodes)
		return ready == nodes, nil
	})
	if wait.Interrupted(err) && waitingFor != nil {
		return fmt.Errorf("controlplane: the cluster is not ready: %w (%w)", waitingFor, err)
	}
	if err != nil {
		return fmt.Errorf("controlplane: starting the cluster: %w", err)
	}
	return nil
}

// healthy returns nil if the component on the loopback port reports itself healthy.
func healthy(ctx context.Context, c *http.Client, port int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz: %s", resp.Status)
	}
	return nil
}

// freePort returns a loopback port that nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("controlplane: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// hostPathVolumes is where the controller manager's hostpath provisioner makes every
// volume's directory, whatever the test: a path fixed in Kubernetes.
const hostPathVolumes = "/tmp/hostpath_pv/"

// volumeDirectories lists the directories of the volumes the cluster provisioned, so that
// Stop removes them: the provisioner deletes one only with its volume, and a test rarely
// waits for that, which left a directory on the machine for every claim of every test.
func (cp *ControlPlane) volumeDirectories() []string {
	if len(cp.processes) == 0 || cp.client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var volumes corev1.PersistentVolumeList
	if err := cp.client.List(ctx, &volumes); err != nil {
		return nil
	}
	var dirs []string
	for _, v := range volumes.Items {
		if h := v.Spec.HostPath; h != nil && strings.HasPrefix(filepath.Clean(h.Path), hostPathVolumes) {
			dirs = append(dirs, filepath.Clean(h.Path))
		}
	}
	return dirs
}
