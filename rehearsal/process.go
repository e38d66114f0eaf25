package rehearsal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Placeholders a Build's Command may hold, replaced when the rehearsal starts it.
const (
	// KubeconfigPlaceholder is the path of the kubeconfig the build must use, which
	// reaches the local control plane through the rehearsal's recorder. It is also in
	// the build's environment as KUBECONFIG.
	KubeconfigPlaceholder = "{kubeconfig}"
	// ProbePlaceholder is an address on the loopback interface for the build's health
	// probes, such as "-health-probe-bind-address={probe}". When the command holds it,
	// the rehearsal waits for the build's /readyz to answer before it listens for its
	// writes; otherwise for its first watch.
	ProbePlaceholder = "{probe}"
	// WebhookPortPlaceholder is the port on the loopback interface the build's webhook
	// server must listen on, such as "-webhook-port={webhook-port}": where the rehearsal
	// points the service references of its webhook configurations and of its CRDs'
	// conversion. Its serving certificate must be valid for 127.0.0.1.
	WebhookPortPlaceholder = "{webhook-port}"
)

// Build is one build of an operator, run as a process of its own.
type Build struct {
	// Command is the program and its arguments, such as
	// {"./bin/manager", "-health-probe-bind-address={probe}"}: a built binary
	// rather than `go run`, whose compilation would count as time to converge.
	Command []string
	// Env is added to the process's environment.
	Env []string
	// Dir is the process's working directory; empty is the rehearsal's.
	Dir string
	// CRDs are files or directories of the CustomResourceDefinitions the build ships,
	// applied before it starts. The new build's replace the old build's, as an upgrade
	// applies its manifests before it rolls the operator.
	CRDs []string
	// Webhooks are files or directories of the build's admission webhook configurations
	// (controller-gen's config/webhook/manifests.yaml), applied before it starts. Their
	// service references, and those of its CRDs' conversion webhooks, become URLs of the
	// port WebhookPortPlaceholder stands for; the build puts its authority into their
	// caBundle itself (webhook.Certificates), as it does in a cluster.
	Webhooks []string
}

// process is a running build.
type process struct {
	cmd   *exec.Cmd
	probe string // its readiness probe's address, if it serves one
	out   *tail
	done  chan struct{}
}

// start starts b with kubeconfig, its webhook server on port.
func (b Build) start(kubeconfig string, port int, output io.Writer) (*process, error) {
	if len(b.Command) == 0 {
		return nil, errors.New("a build without a command")
	}
	p := &process{out: &tail{}, done: make(chan struct{})}
	args := make([]string, len(b.Command))
	for i, a := range b.Command {
		if strings.Contains(a, ProbePlaceholder) && p.probe == "" {
			addr, err := freeAddress()
			if err != nil {
				return nil, err
			}
			p.probe = addr
		}
		a = strings.ReplaceAll(a, KubeconfigPlaceholder, kubeconfig)
		a = strings.ReplaceAll(a, WebhookPortPlaceholder, strconv.Itoa(port))
		args[i] = strings.ReplaceAll(a, ProbePlaceholder, p.probe)
	}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Dir = b.Dir
	p.cmd.Env = append(append(os.Environ(), "KUBECONFIG="+kubeconfig), b.Env...)
	var w io.Writer = p.out
	if output != nil {
		w = io.MultiWriter(p.out, output)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	ownGroup(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", args[0], err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited returns an error if the process has ended, with its last output.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v); its last output:\n%s", p.cmd.Path, p.cmd.ProcessState, p.out)
	default:
		return nil
	}
}

// ready reports whether the process's readiness probe answers 200.
func (p *process) ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.probe+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop ends the process as a rollout does, with SIGTERM, and with SIGKILL if it is still
// running after grace.
func (p *process) stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	terminate(p.cmd)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		kill(p.cmd)
		<-p.done
		return fmt.Errorf("%s did not stop within %v of SIGTERM and was killed", p.cmd.Path, grace)
	}
}

// tail keeps the last lines written to it.
type tail struct {
	mu    sync.Mutex
	lines [][]byte
	part  []byte
}

const tailLines = 30

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, b...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.lines = append(t.lines, bytes.Clone(t.part[:i]))
		t.part = t.part[i+1:]
		if len(t.lines) > tailLines {
			t.lines = t.lines[1:]
		}
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.Join(append(t.lines, t.part), []byte("\n")))
}

// freePort returns two ports on the loopback interface that nothing listens on.
func freePort() (int, int, error) {
	var ports [2]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		defer l.Close() // both held until both are found
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports[0], ports[1], nil
}

// freeAddress returns an address on the loopback interface that nothing listens on.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
