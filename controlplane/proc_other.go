//go:build !linux

package controlplane

import (
	"syscall"
)

// childAttr adds nothing where the kernel cannot kill a child with its parent: the
// watchdog stands in for it.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// watchdogAttr adds nothing: the watchdog shares the terminal's process group, so a
// Ctrl-C ends it together with the processes it watches.
func watchdogAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// childrenMentioning finds nothing without /proc: envtest's processes are then stopped
// by Stop only.
func childrenMentioning(string) []int { return nil }
