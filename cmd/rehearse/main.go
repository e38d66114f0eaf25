// Command rehearse rehearses the upgrade of an operator on a local cluster before it runs
// in a real one, and prints every write the new build makes that a restart of the old
// build does not (package rehearsal):
//
//	go run ./cmd/rehearse -objects DIR -crds DIR -old 'bin/manager-v1 ...' -new 'bin/manager-v2 ...'
//
// The objects are those of the cluster to upgrade: the manifests of a directory
// (-objects), or the custom objects of the CRDs' kinds read from a live cluster through a
// kubeconfig (-kubeconfig), which is only read. Each build is a command, split at spaces,
// run as a process of its own with KUBECONFIG set; {probe} in it is an address for its
// health probes, whose /readyz the rehearsal then waits for, {webhook-port} the port its
// webhook server must listen on, on 127.0.0.1, where the rehearsal points its webhook
// configurations (-webhooks) and its CRDs' conversion, and {kubeconfig} the kubeconfig's
// path. The report ends the output, such as
//
//	the old build, restarted, writes nothing
//	the new build writes:
//	  restarts 3 Deployments: spec.template.spec.containers[memcached].command changed (shop/cache, shop/carts, shop/sessions)
//
// It exits 1 if the rehearsal failed, 2 for a command line it cannot run, and 0 otherwise,
// whatever the report says.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/reconcilekit/reconcilekit/rehearsal"
)

const usage = `Usage: rehearse (-objects DIR | -kubeconfig FILE) -crds DIR -old COMMAND -new COMMAND [flags]

Rehearses an operator's upgrade on a local cluster: the old build converges the objects,
is restarted once (the control), then the new build takes over; prints every write the
new build makes that the control does not.

Flags:
  -objects DIR       manifests of the objects to upgrade (files or directories; repeatable)
  -kubeconfig FILE   read the custom objects of the CRDs' kinds from this cluster instead (read only)
  -crds DIR          the old build's CustomResourceDefinitions (repeatable)
  -new-crds DIR      the new build's (repeatable; default: -crds)
  -old COMMAND       the old build, split at spaces; {probe}, {webhook-port} and {kubeconfig} are replaced
  -new COMMAND       the new build, likewise
  -old-webhooks DIR  the old build's webhook configurations (repeatable)
  -webhooks DIR      the new build's (repeatable)
  -nodes N           simulated nodes of the local cluster (default 1)
  -settle DURATION   how long a build must write nothing to be done (default 5s)
  -limit DURATION    bound of each wait (default 10m)
  -v                 show the builds' output
`

func main() {
	// The local cluster logs through controller-runtime's logger; its errors reach the
	// report's error.
	ctrl.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var bad usageError
	switch {
	case errors.As(err, &bad):
		fmt.Fprintf(os.Stderr, "error: %v\n\n%s", err, usage)
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// usageError is a command line that cannot be run.
type usageError struct{ error }

// list is a flag that may be given more than once.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// config is what the command line asks for.
type config struct {
	objects, crds, newCRDs list
	oldHooks, newHooks     list
	kubeconfig, old, new   string
	nodes                  int
	settle, limit          time.Duration
	verbose                bool
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("rehearse", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&c.objects, "objects", "")
	fs.Var(&c.crds, "crds", "")
	fs.Var(&c.newCRDs, "new-crds", "")
	fs.Var(&c.oldHooks, "old-webhooks", "")
	fs.Var(&c.newHooks, "webhooks", "")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "")
	fs.StringVar(&c.old, "old", "", "")
	fs.StringVar(&c.new, "new", "", "")
	fs.IntVar(&c.nodes, "nodes", 1, "")
	fs.DurationVar(&c.settle, "settle", 5*time.Second, "")
	fs.DurationVar(&c.limit, "limit", 10*time.Minute, "")
	fs.BoolVar(&c.verbose, "v", false, "")
	if err := fs.Parse(args); err != nil {
		return c, usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		return c, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case (len(c.objects) == 0) == (c.kubeconfig == ""):
		return c, usageError{errors.New("give the objects either as -objects or through -kubeconfig")}
	case len(c.crds) == 0:
		return c, usageError{errors.New("-crds is required")}
	case strings.TrimSpace(c.old) == "" || strings.TrimSpace(c.new) == "":
		return c, usageError{errors.New("-old and -new are required")}
	case c.nodes < 1:
		return c, usageError{errors.New("-nodes must be at least 1")}
	}
	if len(c.newCRDs) == 0 {
		c.newCRDs = c.crds
	}
	return c, nil
}

// rehearsal is the rehearsal the command line describes, but for its objects.
func (c config) rehearsal(stderr io.Writer) rehearsal.Rehearsal {
	r := rehearsal.Rehearsal{
		Old:    rehearsal.Build{Command: strings.Fields(c.old), CRDs: c.crds, Webhooks: c.oldHooks},
		New:    rehearsal.Build{Command: strings.Fields(c.new), CRDs: c.newCRDs, Webhooks: c.newHooks},
		Nodes:  c.nodes,
		Settle: c.settle,
		Limit:  c.limit,
	}
	if c.verbose {
		r.Output = stderr
	}
	return r
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	r := c.rehearsal(stderr)
	if c.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
		if err != nil {
			return err
		}
		r.Objects, err = rehearsal.ReadCluster(ctx, cfg, c.crds...)
		if err != nil {
			return fmt.Errorf("reading the cluster: %w", err)
		}
	} else if r.Objects, err = rehearsal.ReadObjects(c.objects...); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rehearsing the upgrade of %d objects\n", len(r.Objects))
	rep, err := r.Run(ctx)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, rep.String())
	return err
}
