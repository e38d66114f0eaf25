package reconcile

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Gate decides, for each object the shell has read, whether this process reconciles it
// now. Sharding (package sharding) is one: a replica reconciles only the objects assigned
// to it, and lets go of one it is asked to drain. A Manager puts every shell it makes behind
// its Gate.
type Gate interface {
	// Enter is called once the object is read. It returns false to leave the object
	// alone; an error is returned to controller-runtime, which retries. Otherwise the
	// reconcile runs, its children getting childLabels (Scope.Labels), and Leave is called
	// when it ends.
	Enter(ctx context.Context, obj client.Object) (childLabels map[string]string, admitted bool, err error)
	// Leave is called when a reconcile that Enter let in has ended.
	Leave(ctx context.Context, obj client.Object)
}
