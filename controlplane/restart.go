package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
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

// RestartNodes restarts kwok, which simulates the nodes, so that it looks at every pod
// again, as a kubelet's periodic sync does. After etcd restarts, kwok was seen to leave a
// pod it had been starting Pending for good, where a kubelet would try again; a scenario
// that restarts etcd calls it once etcd is back, so that a pod stuck by the simulator is
// not blamed on the operator under test.
func (cp *ControlPlane) RestartNodes() error {
	for i, p := range cp.processes {
		if p.name != "kwok" {
			continue
		}
		restarted, err := p.restart(cp.watchdog)
		if err != nil {
			return err
		}
		cp.processes[i] = restarted
		return nil
	}
	return errors.New("controlplane: RestartNodes: the control plane has no nodes")
}
