// The Gadget operator, as a process of its own for the rehearsal's test of an operator
// that serves webhooks: it keeps a ConfigMap for each Gadget, defaults an empty
// spec.mode, and converts v1alpha1, with a certificate it makes itself for 127.0.0.1.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/reconcilekit/reconcilekit/internal/gadget"
	"github.com/reconcilekit/reconcilekit/internal/gadget/v1beta1"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/requeue"
	"github.com/reconcilekit/reconcilekit/webhook"
)

func main() {
	port := flag.Int("webhook-port", 9443, "The port the webhook server listens on, on 127.0.0.1.")
	probe := flag.String("health-probe-bind-address", ":8081", "The address of the health probes.")
	mode := flag.String("default-mode", "standard", "The mode an empty spec.mode is defaulted to.")
	flag.Parse()
	if err := run(ctrl.SetupSignalHandler(), *port, *probe, *mode); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, port int, probe, mode string) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := gadget.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := reconcile.Manager{
		Options: ctrl.Options{
			Scheme:                 scheme,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: probe,
			WebhookServer:          ctrlwebhook.NewServer(ctrlwebhook.Options{Host: "127.0.0.1", Port: port}),
		},
		Controllers: []reconcile.Declaration{reconcile.For(&v1beta1.Gadget{},
			reconcile.LogicFunc[*v1beta1.Gadget](func(ctx context.Context, g *v1beta1.Gadget, s reconcile.Scope) requeue.Outcome {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: "gadget-" + g.Name},
					Data:       map[string]string{"replicas": strconv.Itoa(int(g.Spec.Replicas)), "mode": g.Spec.Mode},
				}
				if _, _, err := ownership.Ensure(ctx, s.Writer, g, cm); err != nil {
					return requeue.Retry(err)
				}
				return requeue.Done()
			}), "gadget-operator",
			reconcile.WithChildren(&corev1.ConfigMap{}),
		).
			WithDefaulter(webhook.DefaulterFunc[*v1beta1.Gadget](func(_ context.Context, g *v1beta1.Gadget) error {
				if g.Spec.Mode == "" {
					g.Spec.Mode = mode
				}
				return nil
			})).
			WithConversion(gadget.Spoke())},
		Certificates: &webhook.Certificates{
			Secret:                        types.NamespacedName{Namespace: "default", Name: "gadget-webhook-certificates"},
			IPAddresses:                   []net.IP{net.IPv4(127, 0, 0, 1)},
			MutatingWebhookConfigurations: []string{"gadget-mutating-webhook-configuration"},
			CustomResourceDefinitions:     []string{"gadgets." + v1beta1.GroupVersion.Group},
		},
	}.New(cfg)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
