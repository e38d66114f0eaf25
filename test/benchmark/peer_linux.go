package main

import "syscall"

// peerAttr makes the kernel kill a peer operator the moment the benchmark dies, however it
// dies: a SIGKILL gives the benchmark no chance to stop it.
func peerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
