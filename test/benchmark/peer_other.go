//go:build !linux

package main

import "syscall"

// peerAttr is nil where the kernel cannot kill a child with its parent.
func peerAttr() *syscall.SysProcAttr { return nil }
