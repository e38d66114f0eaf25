package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// readyCheck returns a readiness check for a manager's /readyz that fails until the
// informer of each of kinds in c has synced and started reports true, and passes from
// then on.
//
// healthz.Ping, the scaffold's check, makes a pod ready as soon as it listens: a Service
// or a rolling update then counts on an operator that has not yet read what it reconciles.
// The kinds are those a controller declares (the reconciled kind, its children, what it
// references), because an informer that has not synced leaves the controller's workers
// waiting on the list. started says whether the controller has started; the manager's
// Elected channel, closed once it has started the controllers, is the usual source. A
// manager with leader election should report a replica standing by as started, or a
// rolling update that waits for the new replica to become ready, while the old one keeps
// the lease, never ends.
//
// The check never waits: a probe that blocks until a slow list ends would time out and say
// less than an answer that names what is missing. It asks for each informer without
// blocking until it syncs, which creates the informer if the controller has not yet (it
// would, with the same cache options, when it starts), and reads HasSynced. The error
// names the kinds still listing, as controller-runtime's healthz serves it on
// /readyz/<name>; /readyz itself withholds the reason.
//
// A kind declared optional (WithOptional) comes wrapped by the manager's CRD gate: it counts
// only while its CustomResourceDefinition exists, and the check fails until the gate has
// listed the CRDs, since until then it cannot tell.
func readyCheck(c cache.Cache, scheme *runtime.Scheme, kinds []client.Object, started func() bool) healthz.Checker {
	// The names are worked out once: the probe runs every few seconds for the life of the
	// process and the scheme does not change.
	names := make([]string, len(kinds))
	for i, obj := range kinds {
		if o, ok := obj.(optionalKind); ok {
			obj = o.Object
		}
		names[i] = kindName(obj, scheme)
	}
	return func(req *http.Request) error {
		var unsynced []string
		for i, obj := range kinds {
			if o, ok := obj.(optionalKind); ok {
				present, known := o.presence()
				if !known {
					unsynced = append(unsynced, names[i]+" (CustomResourceDefinitions not listed yet)")
				}
				if !present {
					continue // asking for its informer would make one that never syncs
				}
				obj = o.Object
			}
			informer, err := c.GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			switch {
			case err != nil: // a kind the API server does not serve, say: the error says which
				unsynced = append(unsynced, fmt.Sprintf("%s (%v)", names[i], err))
			case !informer.HasSynced():
				unsynced = append(unsynced, names[i])
			}
		}
		// One line, so that it reads whole in a probe's log and a kubectl describe.
		var missing []string
		if len(unsynced) > 0 {
			missing = append(missing, "informers not synced: "+strings.Join(unsynced, ", "))
		}
		if !started() {
			missing = append(missing, "controller not started")
		}
		if len(missing) > 0 {
			return errors.New(strings.Join(missing, "; "))
		}
		return nil
	}
}

// kindName names obj's kind as kubectl does a resource, with its group unless it is the
// core group's: "ConfigMap", "Deployment.apps". A type the scheme does not know is named
// by its Go type, which still tells the reader which declaration to look at.
func kindName(obj client.Object, scheme *runtime.Scheme) string {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.GroupKind().String()
}
