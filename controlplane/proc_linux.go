package controlplane

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// childAttr makes the kernel kill a process the moment the program dies, however it
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
