package controlplane

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// process is a control-plane component started by this package rather than by envtest.
type process struct {
	name   string
	cmd    *exec.Cmd
	out    io.Writer // where its output is copied, besides output; may be nil
	output tail
	done   chan struct{} // closed once the process has exited
	err    error         // how it exited, once done is closed
}

// startProcess starts the binary name from dir with args, its output copied to out
// (which may be nil), under the watchdog's guard.
func startProcess(w *watchdog, dir, name string, out io.Writer, args ...string) (*process, error) {
	p := &process{name: name, out: out, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(dir, name), args...)
	p.cmd.SysProcAttr = childAttr()
	var output io.Writer = &p.output
	if out != nil {
		output = io.MultiWriter(&p.output, out)
	}
	p.cmd.Stdout, p.cmd.Stderr = output, output
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("controlplane: starting %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	if err := w.guard(p.cmd.Process.Pid); err != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
		return nil, err
	}
	return p, nil
}

// exited returns an error explaining the exit if the process is no longer running.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("controlplane: %s exited (%v); its last output:\n%s", p.name, p.err, p.output.String())
	default:
		return nil
	}
}

// stopTimeout is how long a component may take to shut down before it is killed.
const stopTimeout = 10 * time.Second

// stopProcesses stops the processes all at once, each gracefully if it can. It reports those that
// had exited before being asked to.
func stopProcesses(ps []*process) error {
	var errs []error
	for _, p := range ps {
		if err := p.exited(); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() {
			select {
			case <-p.done:
			case <-time.After(stopTimeout):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// tail keeps the end of what a process wrote, to explain why it failed.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf[max(0, len(t.buf)-tailSize):])
}
