package reconcile

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Gate decides, for each object the shell has read, whether this process reconciles it
// now. Sharding (package sharding) is one: a replica reconciles only the objects assigned
// to it, and lets go of one it is asked to drain. The shell finds the gate in the
// context its controller runs with (WithGate, typically from the manager's BaseContext),
// so that an operator's main function can put every shell of the manager behind one gate
// without changing how its controllers are built.
type Gate interface {
	// Enter is called once the object is read. It returns false to leave the object
	// alone; an error is returned to controller-runtime, which retries. Otherwise the
	// reconcile runs with the context it returns and Leave is called when it ends.
	Enter(ctx context.Context, obj client.Object) (context.Context, bool, error)
	// Leave is called when a reconcile that Enter let in has ended.
	Leave(ctx context.Context, obj client.Object)
}

type gateKey struct{}

// WithGate returns a copy of ctx whose shells reconcile only what g lets in.
func WithGate(ctx context.Context, g Gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

// gateFrom returns the gate ctx carries, or nil.
func gateFrom(ctx context.Context) Gate {
	g, _ := ctx.Value(gateKey{}).(Gate)
	return g
}
