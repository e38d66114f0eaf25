package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/controlplane"
)

// Rehearsal is an upgrade of an operator rehearsed on a local cluster, before it runs in
// a real one. Set the fields, then Run.
type Rehearsal struct {
	// Objects are the objects of the cluster the upgrade is for, as ReadObjects or
	// ReadCluster return them: the operator's custom objects, and whatever else they need
	// (ConfigMaps they name, say). Their namespaces are created.
	Objects []*unstructured.Unstructured

	// Old is the build that runs now; New the build that replaces it.
	Old, New Build

	// Nodes is the number of simulated nodes of the cluster Run starts; one if zero.
	// Ignored when ControlPlane is set.
	Nodes int

	// ControlPlane is the cluster to rehearse on. Nil: Run starts one of its own, with
	// controlplane.Start, and stops it at the end. A cluster given must hold no other
	// objects of the operator's kinds, and is left with the rehearsal's.
	ControlPlane *controlplane.ControlPlane

	// Settle is how long a build must write nothing before it is done: 5 s if zero.
	Settle time.Duration

	// Limit bounds each wait: for the old build to converge, and for each build to
	// settle. 10 min if zero.
	Limit time.Duration

	// Output receives what the builds print, for a rehearsal that fails; nil discards it.
	// An error of Run ends with a build's last lines anyway.
	Output io.Writer
}

// stopGrace is how long a build has to stop after SIGTERM before it is killed.
const stopGrace = 30 * time.Second

// Run rehearses the upgrade, and returns the report once both builds are stopped:
//
//  1. the old build's CRDs and the Objects are applied, and the old build runs until it
//     has converged: every custom object Current (kstatus), and no write for Settle;
//     then it is stopped with SIGTERM;
//  2. the control: the old build is started again, and every write it makes until it
//     has settled is recorded; a build that has converged makes none;
//  3. the upgrade: the new build's CRDs are applied and the new build started, and
//     every write it makes until it has settled is recorded.
//
// Each build reaches the API server through the rehearsal's recorder, a proxy on the
// loopback interface that reads each object before a write and compares it with the
// API server's answer. A build's leader election Lease is not recorded: a leader
// renews it all the time.
//
// A build that exits before it is stopped, or a wait that outlasts Limit, is an error.
func (r Rehearsal) Run(ctx context.Context) (rep Report, err error) {
	settle, limit := cmpOr(r.Settle, 5*time.Second), cmpOr(r.Limit, 10*time.Minute)
	oldCRDs, err := readCRDs(r.Old.CRDs)
	if err != nil {
		return Report{}, fmt.Errorf("the old build's CRDs: %w", err)
	}
	newCRDs, err := readCRDs(r.New.CRDs)
	if err != nil {
		return Report{}, fmt.Errorf("the new build's CRDs: %w", err)
	}
	cp := r.ControlPlane
	if cp == nil {
		if cp, err = controlplane.Start(ctx, controlplane.Options{Nodes: max(r.Nodes, 1)}); err != nil {
			return Report{}, fmt.Errorf("starting the local cluster: %w", err)
		}
		defer func() { err = errors.Join(err, cp.Stop()) }()
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), apiextensionsv1.AddToScheme(scheme)); err != nil {
		return Report{}, err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return Report{}, err
	}
	rec, err := startRecorder(cp.Config)
	if err != nil {
		return Report{}, err
	}
	defer func() { err = errors.Join(err, rec.close()) }()
	dir, err := os.MkdirTemp("", "rehearsal-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, rec.url); err != nil {
		return Report{}, err
	}

	disco, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		return Report{}, err
	}
	oldPort, newPort, err := freePort()
	if err != nil {
		return Report{}, err
	}
	oldHooks, err := ReadObjects(r.Old.Webhooks...)
	if err != nil {
		return Report{}, fmt.Errorf("the old build's webhooks: %w", err)
	}
	newHooks, err := ReadObjects(r.New.Webhooks...)
	if err != nil {
		return Report{}, fmt.Errorf("the new build's webhooks: %w", err)
	}
	if err := errors.Join(applyCRDs(ctx, c, disco, oldCRDs, oldPort, limit), applyWebhooks(ctx, c, oldHooks, oldPort)); err != nil {
		return Report{}, fmt.Errorf("the old build's manifests: %w", err)
	}
	kinds := map[schema.GroupKind]bool{}
	for _, crd := range oldCRDs {
		kinds[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = true
	}
	var custom []*unstructured.Unstructured
	for _, o := range r.Objects {
		if kinds[o.GroupVersionKind().GroupKind()] {
			custom = append(custom, o)
		}
	}
	run := func(phase string, b Build, port int, ready, converged func(context.Context) error) ([]Write, error) {
		p, err := b.start(kubeconfig, port, r.Output)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", phase, err)
		}
		werr := r.settle(ctx, rec, p, settle, limit, ready, converged)
		serr := p.stop(stopGrace)
		ws, rerr := rec.take()
		if err := errors.Join(werr, serr, rerr); err != nil {
			return nil, fmt.Errorf("%s: %w", phase, err)
		}
		return ws, nil
	}
	// The objects come once the old build is ready: a CRD that converts them needs its
	// webhook served.
	apply := func(ctx context.Context) error { return applyObjects(ctx, c, r.Objects, limit) }
	converged := func(ctx context.Context) error { return current(ctx, c, custom) }
	if _, err := run("the old build converging", r.Old, oldPort, apply, converged); err != nil {
		return Report{}, err
	}
	if rep.Control, err = run("the old build restarted", r.Old, oldPort, nil, nil); err != nil {
		return Report{}, err
	}
	if err := errors.Join(applyCRDs(ctx, c, disco, newCRDs, newPort, limit), applyWebhooks(ctx, c, newHooks, newPort)); err != nil {
		return Report{}, fmt.Errorf("the new build's manifests: %w", err)
	}
	if rep.Upgrade, err = run("the new build", r.New, newPort, nil, nil); err != nil {
		return Report{}, err
	}
	return rep, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// settle waits until p is ready (its probe answers, or it has opened a watch), then runs
// ready, if given, then waits until converged returns nil, if given, and p has written
// nothing for settle.
func (r Rehearsal) settle(ctx context.Context, rec *recorder, p *process, settle, limit time.Duration, ready, converged func(context.Context) error) error {
	deadline := time.Now().Add(limit)
	var readyAt time.Time
	var last error
	for {
		if err := p.exited(); err != nil {
			return err
		}
		now := time.Now()
		lastWrite, watches := rec.activity()
		switch {
		case readyAt.IsZero():
			if (p.probe != "" && p.ready(ctx)) || (p.probe == "" && watches > 0) {
				if ready != nil {
					if err := ready(ctx); err != nil {
						return err
					}
				}
				readyAt = time.Now()
			}
			last = errors.New("the build is not ready")
		case converged != nil:
			if last = converged(ctx); last != nil {
				break
			}
			fallthrough
		default:
			quietSince := readyAt
			if lastWrite.After(quietSince) {
				quietSince = lastWrite
			}
			if now.Sub(quietSince) >= settle {
				return nil
			}
			last = fmt.Errorf("the build wrote %v ago", now.Sub(lastWrite).Round(time.Second))
		}
		if now.After(deadline) {
			return fmt.Errorf("still waiting after %v: %w; the build's last output:\n%s", limit, last, p.out)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// current returns an error naming the objects that are not Current, as kstatus reads
// their status.
func current(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	var behind []string
	for _, o := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), live); err != nil {
			return err
		}
		res, err := status.Compute(live)
		if err != nil {
			return fmt.Errorf("%s: %w", describeObject(o), err)
		}
		if res.Status != status.CurrentStatus {
			behind = append(behind, fmt.Sprintf("%s is %s: %s", describeObject(o), res.Status, res.Message))
		}
	}
	if len(behind) > 0 {
		n := len(behind)
		return fmt.Errorf("%d objects have not converged, such as %s", n, strings.Join(behind[:min(n, 3)], "; "))
	}
	return nil
}

// applyCRDs creates the CRDs, or replaces those that exist, their conversion webhooks
// served on port, and waits until the API server serves every version they serve.
func applyCRDs(ctx context.Context, c client.Client, disco discovery.DiscoveryInterface, crds []*apiextensionsv1.CustomResourceDefinition, port int, limit time.Duration) error {
	for _, crd := range crds {
		crd = crd.DeepCopy()
		localConversion(crd, port)
		err := c.Create(ctx, crd)
		if apierrors.IsAlreadyExists(err) {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err = c.Get(ctx, client.ObjectKeyFromObject(crd), live); err == nil {
				keepConversionCA(crd, live)
				crd.ResourceVersion = live.ResourceVersion
				err = c.Update(ctx, crd)
			}
		}
		if err != nil {
			return fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
		}
	}
	deadline := time.Now().Add(limit)
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			// Discovery, not a list: listing objects stored in another version would need
			// the conversion webhook, which the build serves once it runs.
			gv := crd.Spec.Group + "/" + v.Name
			for {
				err := served(disco, gv, crd.Spec.Names.Plural)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("%s %s is not served after %v: %w", crd.Name, v.Name, limit, err)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}
	return nil
}

// served returns an error unless the API server serves resource in groupVersion.
func served(disco discovery.DiscoveryInterface, groupVersion, resource string) error {
	list, err := disco.ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		return err
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return nil
		}
	}
	return fmt.Errorf("%s is not served in %s yet", resource, groupVersion)
}

// applyObjects creates the namespaces of objs, then objs in order, each tried again until
// limit: a conversion or admission webhook the build serves may not answer at first.
func applyObjects(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var namespaces []string
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	for _, ns := range namespaces {
		err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" && slices.Contains(namespaces, o.GetName()) {
			continue
		}
		for {
			err := c.Create(ctx, strip(o))
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: %w", describeObject(o), err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// writeKubeconfig writes a kubeconfig for the server at url, which needs no credentials.
func writeKubeconfig(path, url string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["rehearsal"] = &clientcmdapi.Cluster{Server: url}
	kc.AuthInfos["rehearsal"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["rehearsal"] = &clientcmdapi.Context{Cluster: "rehearsal", AuthInfo: "rehearsal", Namespace: "default"}
	kc.CurrentContext = "rehearsal"
	return clientcmd.WriteToFile(*kc, path)
}
