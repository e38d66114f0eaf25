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

// apiServerCPU returns the CPU time, user and system, that the API server of cp has used
// since it started, to 10 ms. The difference of two readings is what the requests
// between them cost it: on a small machine the API server's CPU is what every component
// waits for. It reads /proc, so Linux.
func apiServerCPU(cp *reconciletest.ControlPlane) (time.Duration, error) {
	pid, err := cp.APIServerPID()
	if err != nil {
		return 0, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("the API server's CPU time: %w", err)
	}
	// The command name, in parentheses, may hold anything; the fields after it don't.
	// From the state on, utime and stime are the 12th and 13th, in clock ticks of 10 ms
	// (USER_HZ is 100 on Linux).
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("the API server's CPU time: /proc/%d/stat has %d fields after the name", pid, len(fields))
	}
	user, errUser := strconv.ParseInt(fields[11], 10, 64)
	system, errSystem := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(errUser, errSystem); err != nil {
		return 0, fmt.Errorf("the API server's CPU time: %w", err)
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
