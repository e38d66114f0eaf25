package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/reconcilekit/reconcilekit/controlplane"
	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// Options configure a control plane: they are package controlplane's.
type Options = controlplane.Options

// ControlPlane is a running control plane (package controlplane's, whose methods it has:
// KubeConfig, RestartAPIServer, CompactEtcd, PIDs, ...) with what tests need of it: clients
// and users made for a test, namespaces, a proxy, and the API server's refusals of an
// Operator's requests reported as the test's failure.
type ControlPlane struct {
	*controlplane.ControlPlane

	// Config is an administrator's config for the API server, unthrottled. Unlike the
	// embedded ControlPlane's, its requests in the namespace of a test that an Operator's
	// refused request stopped are cut, so that the test ends on its first cause.
	Config *rest.Config

	client   client.Client // an administrator's, outside the tripwire
	refusals *refusalWatch // what the API server refused, read from its audit log
	trips    tripwire      // in Config: cuts the requests of a test stopped for a refusal

	stopOnce sync.Once
	stopErr  error
}

// Start starts a control plane as opts say and returns when it is ready: CRDs
// established and, for a cluster, every node Ready. The caller must Stop it; ctx bounds
// the start only. It is for a control plane shared by a package's tests, started in
// TestMain; a test of its own uses StartAPIServer or StartCluster.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	started, err := controlplane.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	admin, err := client.New(started.Config, client.Options{})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("reconciletest: %w", err), started.Stop())
	}
	cp := &ControlPlane{ControlPlane: started, client: admin, refusals: watchRefusals(started.AuditLog())}
	cp.Config = Intercept(started.Config, cp.trips.hook)
	return cp, nil
}

// Stop stops every process the control plane started and removes its files. It may be
// called more than once.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		cp.stopErr = cp.ControlPlane.Stop()
		if cp.refusals != nil {
			cp.refusals.close()
		}
	})
	return cp.stopErr
}

// StartAPIServer starts etcd and kube-apiserver with the CRDs of the given directories
// installed, and stops them when the test ends. It is the right control plane for
// a controller whose work ends at the API: its objects are stored, validated,
// defaulted and admitted for real, but nothing acts on them. Under go test -short it
// skips the test instead (SkipShort).
func StartAPIServer(t testing.TB, crdDirectories ...string) *ControlPlane {
	t.Helper()
	return startForTest(t, Options{CRDDirectories: crdDirectories})
}

// StartCluster starts a cluster of simulated nodes, with the CRDs of the given
// directories installed, and stops it when the test ends. Deployments roll out, pods are
// scheduled, run and complete, and the garbage collector deletes what an owner leaves.
// Under go test -short it skips the test instead (SkipShort).
func StartCluster(t testing.TB, nodes int, crdDirectories ...string) *ControlPlane {
	t.Helper()
	if nodes < 1 {
		t.Fatalf("reconciletest: a cluster needs a node, not %d", nodes)
	}
	return startForTest(t, Options{CRDDirectories: crdDirectories, Nodes: nodes})
}

func startForTest(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	fasttier.Skip(t)
	cp, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cp
}

// Client returns an administrator's client that knows the types of scheme, or those of
// client-go when scheme is nil. Reads go to the API server; there is no cache.
func (cp *ControlPlane) Client(t testing.TB, scheme *runtime.Scheme) client.Client {
	t.Helper()
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The constants of the cluster's simulated nodes, as package controlplane names them.
const (
	// ExitCodeAnnotation is controlplane.ExitCodeAnnotation: the exit code of a pod that
	// runs once.
	ExitCodeAnnotation = controlplane.ExitCodeAnnotation
	// MessageAnnotation is controlplane.MessageAnnotation: the termination message of a
	// pod that runs once.
	MessageAnnotation = controlplane.MessageAnnotation
	// RunForAnnotation is controlplane.RunForAnnotation: how long a pod that runs once
	// runs.
	RunForAnnotation = controlplane.RunForAnnotation
	// BadImageTag is controlplane.BadImageTag: the tag of an image no node can pull.
	BadImageTag = controlplane.BadImageTag
	// StorageClassName is controlplane.StorageClassName: the cluster's default
	// StorageClass.
	StorageClassName = controlplane.StorageClassName
)
