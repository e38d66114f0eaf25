package controlplane

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/fasttier"
)

// abandonEnv makes the test binary start a cluster, print its directory, and panic
// once its input ends, leaving the cluster to the watchdog and the kernel.
const abandonEnv = "CONTROLPLANE_ABANDON_CLUSTER"

func abandonCluster() {
	cp, err := Start(context.Background(), Options{Nodes: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(cp.dir)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test has seen the cluster run
	panic("controlplane: abandoning a cluster")
}

func TestMain(m *testing.M) {
	if os.Getenv(abandonEnv) != "" {
		abandonCluster()
	}
	fasttier.SkipExamples("Example")
	os.Exit(m.Run())
}
