package controlplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RestartAPIServer kills kube-apiserver, as a crash or an out-of-memory kill would, and
// starts it again, while etcd and the rest of the cluster keep running. The server comes
// back on the same address with the same certificates and the same data, so every config
// handed out before, ConfigFor's included, still works: clients see their connections
// and watches break and their requests fail for a few seconds, and then only their own
// recovery. It returns once the server is healthy again.
func (cp *ControlPlane) RestartAPIServer() error {
	apiServer := cp.env.ControlPlane.APIServer
	// Stopping gracefully would wait up to a minute for the clients' watches to end.
	if err := kill(apiServer.Path, apiServer.Stop); err != nil {
		return fmt.Errorf("controlplane: stopping the API server: %w", err)
	}
	if err := apiServer.Start(); err != nil {
		return fmt.Errorf("controlplane: starting the API server again: %w", err)
	}
	// The new process must die with this program, like the one it replaces.
	for _, pid := range childrenMentioning(cp.dir) {
		if err := cp.watchdog.guard(pid); err != nil {
			return err
		}
	}
	return nil
}

// RestartEtcd kills etcd, as a crash or a node's reboot would, and starts it again on the
// same address with the same data, while kube-apiserver and the rest of the cluster keep
// running. The API server sees its storage vanish: requests fail and its watch cache
// loses its watches on etcd until etcd is back. It returns once etcd is healthy again.
func (cp *ControlPlane) RestartEtcd() error {
	etcd := cp.env.ControlPlane.Etcd
	if err := kill(filepath.Clean(etcd.DataDir), etcd.Stop); err != nil {
		return fmt.Errorf("controlplane: stopping etcd: %w", err)
	}
	if err := etcd.Start(); err != nil {
		return fmt.Errorf("controlplane: starting etcd again: %w", err)
	}
	return cp.guardChildren()
}

// kill kills the child processes whose command line mentions s and then has envtest
// forget them with stop, which fails if it signals a process already gone that it has
// not yet seen exit: it is tried again until it has.
func kill(s string, stop func() error) error {
	for _, pid := range childrenMentioning(s) {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
	var err error
	for range 50 {
		if err = stop(); err == nil || !errors.Is(err, syscall.ESRCH) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// RestartNodes restarts kwok, which simulates the nodes, as a kubelet restarts: the new
// process takes the nodes over within seconds, as a kubelet that keeps its node's name
// does, and looks at every pod again. A scenario that restarts etcd calls it once etcd is
// back, since kwok does not retry a pod's status it failed to write meanwhile, where a
// kubelet would.
//
// It returns once kwok holds every node's lease and has started, or reported on, every
// pod bound to a node that no node had yet looked at. kwok was seen to leave such a pod
// Pending for good after etcd restarted, and to crash as it starts on nodes and pods at
// once (a data race of its own); it is restarted again in either case, up to five times,
// so that the simulator's failings are not blamed on the operator under test.
func (cp *ControlPlane) RestartNodes() error {
	i := slices.IndexFunc(cp.processes, func(p *process) bool { return p.name == "kwok" })
	if i < 0 {
		return errors.New("controlplane: RestartNodes: the control plane has no nodes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), restartNodesTimeout)
	defer cancel()
	var err error
	for range 5 {
		kwok, startErr := cp.restartKwok(ctx, i)
		if startErr != nil {
			return startErr
		}
		if err = cp.awaitNodeLeases(ctx, kwok); err == nil {
			if err = cp.awaitPodsSeen(ctx, kwok); err == nil {
				return nil
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("controlplane: RestartNodes: %w", err)
}

// restartNodesTimeout bounds RestartNodes; on an idle machine it takes about ten seconds,
// most of them kwok's wait before it tries again to take a lease its cache had not yet seen.
const restartNodesTimeout = 3 * time.Minute

// podsSeenTimeout is how long kwok has, once it holds every node, to look at the pods that
// were waiting for it before it is deemed to have left them.
const podsSeenTimeout = 20 * time.Second

// restartKwok stops the kwok process cp.processes[i], unless it has exited already, hands
// its nodes' leases over and starts it again.
func (cp *ControlPlane) restartKwok(ctx context.Context, i int) (*process, error) {
	kwok := cp.processes[i]
	if kwok.exited() == nil {
		if err := stopProcesses([]*process{kwok}); err != nil {
			return nil, err
		}
	}
	if err := cp.releaseNodeLeases(ctx); err != nil {
		return nil, err
	}
	restarted, err := startProcess(cp.watchdog, filepath.Dir(kwok.cmd.Path), kwok.name, kwok.out, kwok.cmd.Args[1:]...)
	if err != nil {
		return nil, err
	}
	cp.processes[i] = restarted
	return restarted, nil
}

// releaseNodeLeases clears the holder of every node's lease, so that kwok takes them at its
// next try rather than wait for those of the process it replaces to expire, while the node
// controller marks the nodes unreachable. It retries while the API server is still
// recovering, as it may be when etcd has just restarted.
func (cp *ControlPlane) releaseNodeLeases(ctx context.Context) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var leases coordinationv1.LeaseList
		if last = cp.client.List(ctx, &leases, client.InNamespace(corev1.NamespaceNodeLease)); last != nil {
			return false, nil
		}
		for _, l := range leases.Items {
			if l.Spec.HolderIdentity == nil {
				continue
			}
			l.Spec.HolderIdentity = nil
			if last = cp.client.Update(ctx, &l); last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("controlplane: releasing the nodes' leases for kwok to take over: %w (last: %v)", err, last)
	}
	return nil
}

// awaitNodeLeases waits until kwok holds the lease of every node, and so acts on its pods.
func (cp *ControlPlane) awaitNodeLeases(ctx context.Context, kwok *process) error {
	var waitingFor string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := kwok.exited(); err != nil {
			return false, err
		}
		var nodes corev1.NodeList
		if err := cp.client.List(ctx, &nodes, kwokNodes); err != nil {
			waitingFor = err.Error()
			return false, nil
		}
		for _, n := range nodes.Items {
			var l coordinationv1.Lease
			err := cp.client.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: n.Name}, &l)
			if err != nil || l.Spec.HolderIdentity == nil {
				waitingFor = "the lease of node " + n.Name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for kwok to take the nodes over: %w (waiting for %s)", err, waitingFor)
	}
	return nil
}

// awaitPodsSeen waits until kwok has looked at every pod that, when it took the nodes over,
// was bound to a node that had not yet looked at it, and names those it left.
func (cp *ControlPlane) awaitPodsSeen(ctx context.Context, kwok *process) error {
	waiting, err := cp.unseenPods(ctx)
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, podsSeenTimeout, true, func(ctx context.Context) (bool, error) {
		if err := kwok.exited(); err != nil {
			return false, err
		}
		now, err := cp.unseenPods(ctx)
		if err != nil {
			return false, nil
		}
		for uid := range waiting {
			if _, ok := now[uid]; !ok {
				delete(waiting, uid)
			}
		}
		return len(waiting) == 0, nil
	})
	if err := kwok.exited(); err != nil {
		return err
	}
	if len(waiting) > 0 {
		return fmt.Errorf("kwok left pods Pending that no node has looked at: %s", strings.Join(slices.Sorted(maps.Values(waiting)), ", "))
	}
	return err
}

// unseenPods returns the pods no node has looked at yet, by UID, each named namespace/name.
func (cp *ControlPlane) unseenPods(ctx context.Context) (map[types.UID]string, error) {
	var list corev1.PodList
	if err := cp.client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing the pods for kwok to look at: %w", err)
	}
	unseen := map[types.UID]string{}
	for _, p := range list.Items {
		if unseenByNode(&p) {
			unseen[p.UID] = p.Namespace + "/" + p.Name
		}
	}
	return unseen, nil
}

// unseenByNode reports whether pod is bound to a node that has not yet looked at it: a
// node reports each container it runs, or fails to start, in the pod's status, and a pod
// being deleted is for the node to remove.
func unseenByNode(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil &&
		pod.Status.Phase == corev1.PodPending &&
		len(pod.Status.ContainerStatuses) == 0 && len(pod.Status.InitContainerStatuses) == 0
}
