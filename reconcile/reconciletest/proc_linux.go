package reconciletest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childAttr makes the kernel kill a process the moment the test binary dies, however it
// dies, and keeps it out of the terminal's process group, so that a Ctrl-C meant for the
// program reaches the program, which then stops the control plane in order.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// watchdogAttr keeps the watchdog out of the terminal's process group: it must outlive
// the program it watches.
func watchdogAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// childrenMentioning returns the processes this process started whose command line
// contains s. It finds the processes envtest starts, whose ids it keeps to itself.
func childrenMentioning(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentOf(pid) != os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentOf returns the parent of a process, or -1 if it is gone.
func parentOf(pid int) int {
	fields := statFields(pid)
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return ppid
}

// cpuTime returns the CPU time a process has used, user and system, in clock ticks of
// 10 ms (USER_HZ is 100 on Linux).
func cpuTime(pid int) (time.Duration, error) {
	fields := statFields(pid)
	if len(fields) < 13 {
		return 0, fmt.Errorf("reconciletest: no CPU time for process %d", pid)
	}
	user, errUser := strconv.ParseInt(fields[11], 10, 64)
	system, errSystem := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(errUser, errSystem); err != nil {
		return 0, err
	}
	return time.Duration(user+system) * 10 * time.Millisecond, nil
}

// statFields returns the fields of /proc/<pid>/stat after the command name (the state
// first), or nil if the process is gone.
func statFields(pid int) []string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// The command name, in parentheses, may hold anything; the fields after it don't.
	return strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
}
