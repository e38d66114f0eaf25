//go:build !unix

package rehearsal

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }

func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
