// Migrate runs storage.Migrate for one CRD, as an operator's start-up or a Job would, in a
// process of its own that the migration scenario can kill: the kubeconfig is $KUBECONFIG.
// It prints the result and exits 0 once the migration is done, 1 if it failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/reconcilekit/reconcilekit/storage"
)

func main() {
	crd := flag.String("crd", "", "the CRD whose objects to migrate")
	workers := flag.Int("workers", 4, "objects written at once")
	page := flag.Int64("page-size", 500, "objects listed at a time")
	qps := flag.Float64("qps", 200, "requests a second")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg.QPS, cfg.Burst = float32(*qps), int(*qps)
	res, err := storage.Migrate(context.Background(), cfg, *crd, storage.WithWorkers(*workers), storage.WithPageSize(*page))
	if err != nil {
		fmt.Fprintf(os.Stderr, "migration failed (incomplete: %v): %v\n", storage.IsIncomplete(err), err)
		os.Exit(1)
	}
	fmt.Printf("migrated: %+v\n", res)
}
