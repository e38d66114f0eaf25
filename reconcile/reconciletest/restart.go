package reconciletest

import (
	"fmt"
	"os"
	"path/filepath"
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
	for _, pid := range childrenMentioning(apiServer.Path) {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
	if err := apiServer.Stop(); err != nil {
		return fmt.Errorf("reconciletest: stopping the API server: %w", err)
	}
	if err := apiServer.Start(); err != nil {
		return fmt.Errorf("reconciletest: starting the API server again: %w", err)
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
	dataDir := filepath.Clean(etcd.DataDir)
	for _, pid := range childrenMentioning(dataDir) {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
	if err := etcd.Stop(); err != nil {
		return fmt.Errorf("reconciletest: stopping etcd: %w", err)
	}
	if err := etcd.Start(); err != nil {
		return fmt.Errorf("reconciletest: starting etcd again: %w", err)
	}
	return cp.guardChildren()
}
