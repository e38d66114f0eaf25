package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// watchdogScript reads a directory, then process ids, one a line, until it reads
// "release" or its input ends. Input ends when the program that feeds it dies, however it dies (a panic,
// os.Exit, `go test -timeout`, SIGKILL), because the kernel closes the program's end of
// the pipe. It then kills the processes and removes the control plane's directory.
const watchdogScript = `
read -r dir
pids=
while read -r line; do
	case $line in
	release) exit 0 ;;
	*) pids="$pids $line" ;;
	esac
done
[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
sleep 1
rm -rf "$dir"
`

// watchdog kills the processes of a control plane whose program died without stopping
// them. Stop stops them in order and then releases the watchdog; it is the safety net
// for the abnormal path, and the only one for the processes envtest starts, which it
// starts without asking the kernel to kill them with their parent.
type watchdog struct {
	cmd  *exec.Cmd
	pipe *os.File

	mu      sync.Mutex
	guarded map[int]bool
}

// startWatchdog starts a watchdog that, if it fires, also removes dir.
func startWatchdog(dir string) (*watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("controlplane: starting the watchdog: %w", err)
	}
	defer r.Close() // the watchdog holds its own copy
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = r
	cmd.SysProcAttr = watchdogAttr()
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("controlplane: starting the watchdog: %w", err)
	}
	wd := &watchdog{cmd: cmd, pipe: w, guarded: make(map[int]bool)}
	if _, err := fmt.Fprintln(w, dir); err != nil {
		return nil, errors.Join(fmt.Errorf("controlplane: starting the watchdog: %w", err), wd.release())
	}
	return wd, nil
}

// guard tells the watchdog to kill pid should this program die.
func (w *watchdog) guard(pid int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.guarded[pid] {
		return nil
	}
	w.guarded[pid] = true
	_, err := fmt.Fprintln(w.pipe, pid)
	return err
}

// release tells the watchdog that everything it guards has stopped, and waits for it
// to exit.
func (w *watchdog) release() error {
	_, err := fmt.Fprintln(w.pipe, "release")
	w.pipe.Close()
	if waitErr := w.cmd.Wait(); err == nil {
		err = waitErr
	}
	if err != nil {
		return fmt.Errorf("controlplane: releasing the watchdog: %w", err)
	}
	return nil
}
