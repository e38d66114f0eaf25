package rehearsal_test

import (
	"context"
	"fmt"

	"github.com/reconcilekit/reconcilekit/rehearsal"
)

// A Report words for a reviewer what each build wrote: here the control (the old build,
// restarted) wrote nothing, and the new build restarts two Deployments by changing their
// container's command, and writes a status it did not before.
func ExampleReport() {
	rep := rehearsal.Report{Upgrade: []rehearsal.Write{
		{Verb: rehearsal.Restarts, Kind: "Deployment", Namespace: "shop", Name: "cache",
			Changes: []rehearsal.Change{"spec.template.spec.containers[memcached].command changed"}},
		{Verb: rehearsal.Restarts, Kind: "Deployment", Namespace: "shop", Name: "sessions",
			Changes: []rehearsal.Change{"spec.template.spec.containers[memcached].command changed"}},
		{Verb: rehearsal.UpdatesStatus, Kind: "Memcached", Namespace: "shop", Name: "cache",
			Changes: []rehearsal.Change{"status.selector added"}},
	}}
	fmt.Print(rep)
	// Output:
	// the old build, restarted, writes nothing
	// the new build writes:
	//   restarts 2 Deployments: spec.template.spec.containers[memcached].command changed (shop/cache, shop/sessions)
	//   updates the status of 1 Memcached: status.selector added (shop/cache)
}

// A rehearsal of an upgrade from the operator that runs now (bin/manager-v1) to its next
// build (bin/manager-v2), on the objects of the cluster to upgrade, saved as YAML. It
// starts a local cluster, so it is compiled here and not run; cmd/rehearse is this as a
// command.
func ExampleRehearsal() {
	objects, err := rehearsal.ReadObjects("testdata/objects.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := rehearsal.Rehearsal{
		Objects: objects,
		Old:     rehearsal.Build{Command: []string{"bin/manager-v1"}, CRDs: []string{"v1/config/crd/bases"}},
		New:     rehearsal.Build{Command: []string{"bin/manager-v2"}, CRDs: []string{"config/crd/bases"}},
	}.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(rep)
}
