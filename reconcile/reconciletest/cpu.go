package reconciletest

import (
	"errors"
	"time"
)

// APIServerCPU returns the CPU time, user and system, that the API server has used since
// it started, to 10 ms. The difference of two readings is what the requests between them
// cost it: on a small machine the API server's CPU is what every component waits for.
// It needs /proc, so Linux.
func (cp *ControlPlane) APIServerCPU() (time.Duration, error) {
	pids := childrenMentioning(cp.env.ControlPlane.APIServer.Path)
	if len(pids) == 0 {
		return 0, errors.New("reconciletest: the API server's process is not found; APIServerCPU needs /proc")
	}
	return cpuTime(pids[0])
}
