// Command kubectl-reconcilekit is a kubectl plugin for the operators built with
// reconcilekit, and for any object whose status kstatus reads. Installed on the PATH,
//
//	go install github.com/reconcilekit/reconcilekit/cmd/kubectl-reconcilekit@latest
//
// it runs as
//
//	kubectl reconcilekit explain KIND/NAME [-n NAMESPACE] [--kubeconfig FILE] [-o text|json]
//
// which prints why the object is not done: each chain of the objects it controls that holds
// it back, leaf first, such as
//
//	Pod web-5d8f-x2x: ImagePullBackOff (image memcached:nope) -> ReplicaSet web-5d8f: Progressing (Ready: 0/1) -> Deployment web: Progressing (Ready: 0/1) -> Memcached web: Reconciling (...)
//
// or a single line for an object that is Current. -o json prints the report of package
// explain, whose shape its Report type documents.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/reconcilekit/reconcilekit/explain"
)

const usage = `Usage: kubectl reconcilekit explain KIND/NAME [flags]

Prints why an object is not done: the chains of the objects it controls that hold it
back, leaf first, with their recent Warning events; one line if it is Current.

Flags:
  -n, --namespace NAME   the object's namespace (default: the kubeconfig context's)
      --kubeconfig FILE  the kubeconfig (default: $KUBECONFIG, then ~/.kube/config)
  -o, --output FORMAT    text or json (default text)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
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

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "explain" {
		return usageError{errors.New("the only command is explain")}
	}
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var namespace, kubeconfig, output string
	fs.StringVar(&namespace, "n", "", "")
	fs.StringVar(&namespace, "namespace", "", "")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "")
	fs.StringVar(&output, "o", "text", "")
	fs.StringVar(&output, "output", "text", "")

	// kubectl's flags may come before or after the object, as with kubectl itself.
	var refs []string
	for rest := args[1:]; ; rest = fs.Args()[1:] {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				_, err = io.WriteString(out, usage)
				return err
			}
			return usageError{err}
		}
		if fs.NArg() == 0 {
			break
		}
		refs = append(refs, fs.Arg(0))
	}
	if len(refs) != 1 {
		return usageError{fmt.Errorf("want one KIND/NAME, got %d", len(refs))}
	}
	if output != "text" && output != "json" {
		return usageError{fmt.Errorf("-o %s: want text or json", output)}
	}

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return err
	}
	if namespace == "" {
		if namespace, _, err = loader.Namespace(); err != nil {
			return err
		}
	}
	report, err := explain.Object(ctx, cfg, namespace, refs[0])
	if err != nil {
		return err
	}
	if output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return report.WriteText(out)
}
