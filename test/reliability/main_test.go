package reliability

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	atv1alpha1 "github.com/reconcilekit/reconcilekit/examples/at/api/v1alpha1"
	keyvalv1alpha1 "github.com/reconcilekit/reconcilekit/examples/keyval/api/v1alpha1"
	memcachedv1beta1 "github.com/reconcilekit/reconcilekit/examples/memcached/api/v1beta1"
	podsetv1alpha1 "github.com/reconcilekit/reconcilekit/examples/podset/api/v1alpha1"
	"github.com/reconcilekit/reconcilekit/internal/fasttier"
	"github.com/reconcilekit/reconcilekit/reconcile/reconciletest"
)

var (
	full = flag.Bool("full", false, "run every scenario at full size: 100 objects of each kind, 50 crashes, reconciles counted over a minute")
	logs = flag.Bool("logs", false, "show the operators' logs")
	// shardedAts measures a shard's heap with a larger share than the full size gives.
	shardedAts = flag.Int("sharded-ats", 0, "Ats a sharding scenario creates at a time (0: 1000 with -full, 30 without)")
	// heapProfiles is for finding where a replica's heap goes (go tool pprof -diff_base).
	heapProfiles = flag.String("heap-profiles", "", "write each sharding replica's heap profile, sampled every 4 KiB, to this directory whenever its heap is measured")
)

var (
	// cp is the cluster every scenario shares, each in namespaces of its own.
	cp *reconciletest.ControlPlane
	// scheme knows the types of Kubernetes and of the operators.
	scheme = runtime.NewScheme()
	// codecs decode them, JSON or protobuf.
	codecs = serializer.NewCodecFactory(scheme)
)

// scale is how hard the scenarios push.
type scale struct {
	objects int           // created of each kind
	crashes int           // of the operators, one after another
	window  time.Duration // over which reconciles are counted
	limit   time.Duration // for convergence, far beyond what an idle machine needs
}

// sized returns the full scale or the short one that `go test ./...` runs.
func sized() scale {
	if *full {
		return scale{objects: 100, crashes: 50, window: time.Minute, limit: 10 * time.Minute}
	}
	return scale{objects: 10, crashes: 5, window: 15 * time.Second, limit: 3 * time.Minute}
}

func TestMain(m *testing.M) {
	flag.Parse()
	if fasttier.SkipPackage() {
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logger := logr.Discard()
	if *logs {
		logger = zap.New(zap.UseDevMode(true))
	}
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go's own logs, such as the event broadcasters'
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, memcachedv1beta1.AddToScheme, podsetv1alpha1.AddToScheme, atv1alpha1.AddToScheme,
		keyvalv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}

	ctx := context.Background()
	var crds []string
	for _, op := range append(operators, keyvalOperator) {
		crds = append(crds, filepath.Join("..", "..", "examples", op.name, "config", "crd", "bases"))
	}
	var err error
	if cp, err = reconciletest.Start(ctx, reconciletest.Options{CRDDirectories: crds, Nodes: 6}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	for _, op := range append(operators, keyvalOperator) {
		if err := op.install(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}
