package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

// controlPlaneCPU returns the CPU time, user and system, that each component of cp has
// used since it started, to 10 ms, by the name of its binary (kube-apiserver, etcd, and for
// a cluster kube-controller-manager, kube-scheduler, kwok). The difference of two readings
// is what the work between them cost each: on a small machine the API server's CPU is what
// every component waits for. It reads /proc, so Linux.
func controlPlaneCPU(cp *reconciletest.ControlPlane) (map[string]time.Duration, error) {
	cpu := map[string]time.Duration{}
	for name, pid := range cp.PIDs() {
		d, err := processCPUOf(pid)
		if err != nil {
			return nil, fmt.Errorf("the CPU time of %s: %w", name, err)
		}
		cpu[name] = d
	}
	if _, ok := cpu["kube-apiserver"]; !ok {
		return nil, errors.New("the API server's process is not found; the benchmark needs /proc")
	}
	return cpu, nil
}

// apiServerCPU is controlPlaneCPU's reading of the API server alone.
func apiServerCPU(cp *reconciletest.ControlPlane) (time.Duration, error) {
	cpu, err := controlPlaneCPU(cp)
	return cpu["kube-apiserver"], err
}

// processCPUOf returns the CPU time, user and system, that process pid has used, to 10 ms.
func processCPUOf(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold anything; the fields after it don't.
	// From the state on, utime and stime are the 12th and 13th, in clock ticks of 10 ms
	// (USER_HZ is 100 on Linux).
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat has %d fields after the name", pid, len(fields))
	}
	user, errUser := strconv.ParseInt(fields[11], 10, 64)
	system, errSystem := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(errUser, errSystem); err != nil {
		return 0, err
	}
	return time.Duration(user+system) * 10 * time.Millisecond, nil
}

// processCPU returns the CPU time, user and system, this process has used: the operator
// under test, and the benchmark's own creators and observer, which every implementation
// shares.
func processCPU() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
