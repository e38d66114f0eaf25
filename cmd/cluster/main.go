// Cluster runs the local control plane alone, for an operator of your own: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok simulating nodes, as the
// tests of reconcilekit's operators run them (package controlplane), unthrottled. It
// creates a namespace that enforces the restricted Pod Security Standard, writes an
// administrator's kubeconfig whose context works in that namespace, prints the line that
// points kubectl and your operator at it, and runs until interrupted (SIGINT or SIGTERM),
// then stops every process it started. From the root of a reconcilekit checkout:
//
//	make cluster
//
// or anywhere, in a module or not:
//
//	go run github.com/reconcilekit/reconcilekit/cmd/cluster@latest
//
// The command runs the control-plane binaries, it does not build them: it finds them in
// the directory KUBEBUILDER_ASSETS names, or else in the newest complete directory that
// `make controlplane` of a reconcilekit checkout built into the user cache directory
// (~/.cache/reconcilekit/controlplane/...), and otherwise fails saying so. The build takes
// about 15 minutes once per machine, from pins that live in the checkout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/controlplane"
)

func main() {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	// Flags of its own: controller-runtime registers a -kubeconfig of its own on the
	// command line's set, which reads one rather than writes it.
	flags := flag.NewFlagSet("cluster", flag.ExitOnError)
	var o options
	flags.IntVar(&o.nodes, "nodes", 2, "the number of simulated nodes")
	flags.StringVar(&o.namespace, "namespace", "dev", "the namespace that enforces the restricted Pod Security Standard, the kubeconfig's")
	flags.StringVar(&o.kubeconfig, "kubeconfig", filepath.Join(cache, "reconcilekit", "cluster", "kubeconfig"), "where to write the kubeconfig, removed at the end")
	flags.BoolVar(&o.verbose, "v", false, "show the output of every component")
	_ = flags.Parse(os.Args[1:]) // ExitOnError
	if flags.NArg() > 0 || o.nodes < 1 {
		flags.Usage()
		os.Exit(2)
	}
	// Interrupted while it starts, the control plane stops what it has started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// options are what the flags say.
type options struct {
	nodes      int
	namespace  string
	kubeconfig string
	verbose    bool
}

// run starts the control plane, says how to use it, and stops it when ctx is done.
func run(ctx context.Context, o options, out io.Writer) (err error) {
	opts := controlplane.Options{Nodes: o.nodes}
	if o.verbose {
		opts.Output = os.Stderr
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, cp.Stop(), os.Remove(o.kubeconfig))
		if err == nil {
			fmt.Fprintln(out, "Stopped: every process of the control plane has ended; the kubeconfig is removed.")
		}
	}()

	admin, err := client.New(cp.Config, client.Options{})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   o.namespace,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
	}}
	if o.namespace == "default" { // it exists: restrict it
		err = admin.Patch(ctx, ns, client.MergeFrom(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}))
	} else {
		err = admin.Create(ctx, ns)
	}
	if err != nil {
		return fmt.Errorf("the namespace %s: %w", o.namespace, err)
	}
	kubeconfig, err := cp.KubeConfig(o.namespace)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.kubeconfig), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(o.kubeconfig, kubeconfig, 0o600); err != nil {
		return err
	}

	fmt.Fprintf(out, `A local control plane is running: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
and kwok simulating %d nodes, every component unthrottled. Namespace %q enforces the
restricted Pod Security Standard, and the kubeconfig's context works in it. Point kubectl
and your operator (go run ./cmd) at it with:

	export KUBECONFIG=%s

Any recent kubectl works; make kubectl, in the reconcilekit checkout, builds one of the
control plane's version once and prints its path. Stop with Ctrl-C.
`, o.nodes, o.namespace, o.kubeconfig)

	<-ctx.Done()
	fmt.Fprintln(out, "Stopping...")
	return nil
}
